/*
 * A transport in use (transport.h): its table and the context its open
 * made, opened and released in one place so every caller does both alike.
 */
#include "backend/transport.h"

#include <string.h>

int perfdb_comm_transport_open(struct perfdb_comm_transport *t,
			       const struct perfdb_comm_transport_i *i, struct perfdb_err *err)
{
	t->i = i;
	t->ctx = NULL;
	return i->open(&t->ctx, err);
}

void perfdb_comm_transport_release(struct perfdb_comm_transport *t)
{
	if (t->i)
		t->i->release(t->ctx);
	memset(t, 0, sizeof(*t));
}
