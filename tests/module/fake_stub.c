/* A library the fake module needs (tests/module/fake_module.c). */
int perfdb_fake_stub(void);

int perfdb_fake_stub(void)
{
	return 1;
}
