/*
 * Sample statistics and number formatting: see include/perfdb/stats.h.
 *
 * Follows docs/spec/parse.md §3 (mean, median, population std; Python float()
 * parsing; `nan` output) and §4 (`%.6f`), and docs/spec/replay.md Decision 2.
 * Where the reference computes std as sqrt(Σx²/n − mean²) (parse.md open
 * question 7), we use two passes around a compensated mean: durations of
 * ~1e9 ns with sub-ns spread would otherwise lose every significant digit.
 *
 * Parsing and formatting assume LC_NUMERIC is "C" (the default until a
 * program calls setlocale): strtod and printf use its decimal point.
 */
#include "perfdb/stats.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Neumaier's compensated sum: exact to within one rounding of the result
 * for any order of magnitudes, unlike Kahan's when a term exceeds the sum. */
struct nsum {
	double s, c;
};

static void nsum_add(struct nsum *a, double x)
{
	double t = a->s + x;
	if (fabs(a->s) >= fabs(x))
		a->c += (a->s - t) + x;
	else
		a->c += (x - t) + a->s;
	a->s = t;
}

static double nsum_value(const struct nsum *a)
{
	return a->s + a->c;
}

double perfdb_stats_mean(const double *x, size_t n)
{
	if (!n)
		return 0.0;
	struct nsum acc = { 0.0, 0.0 };
	for (size_t i = 0; i < n; i++)
		nsum_add(&acc, x[i]);
	return nsum_value(&acc) / (double)n;
}

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;
	return (a > b) - (a < b);
}

void perfdb_stats_compute(double *x, size_t n, struct perfdb_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!n)
		return;
	qsort(x, n, sizeof(*x), cmp_double);
	out->n = n;
	out->min = x[0];
	out->max = x[n - 1];
	out->mean = perfdb_stats_mean(x, n);

	if (n % 2) {
		out->median = x[n / 2];
	} else {
		double a = x[n / 2 - 1], b = x[n / 2];
		double mid = (a + b) / 2;
		/* a + b overflows only near DBL_MAX; halving first is then
		 * exact enough and stays finite. */
		out->median = isfinite(mid) ? mid : a / 2 + b / 2;
	}

	if (n == 1)
		return;
	/*
	 * Corrected two-pass (Chan, Golub, LeVeque 1983):
	 * var = (Σd² − (Σd)²/n) / n with d = x − mean.  The second term
	 * removes the error left by the rounding of the mean itself.
	 */
	struct nsum sq = { 0.0, 0.0 }, lin = { 0.0, 0.0 };
	for (size_t i = 0; i < n; i++) {
		double d = x[i] - out->mean;
		nsum_add(&sq, d * d);
		nsum_add(&lin, d);
	}
	double sd = nsum_value(&lin);
	double var = (nsum_value(&sq) - sd * sd / (double)n) / (double)n;
	out->std = var > 0 ? sqrt(var) : 0.0;
}

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' ||
	       c == '\r';
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int eq_nocase(const char *p, size_t len, const char *lit)
{
	size_t n = strlen(lit);
	if (len != n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = p[i];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (c != lit[i])
			return 0;
	}
	return 1;
}

/*
 * Copy one digitpart (digit ("_"? digit)*) from p[*i] into buf, dropping
 * the underscores.  Returns the number of digits copied (0 if none), or -1
 * when an underscore is not between two digits.
 */
static long take_digits(const char *p, size_t len, size_t *i, char *buf,
			size_t *bn)
{
	long nd = 0;
	while (*i < len) {
		char c = p[*i];
		if (is_digit(c)) {
			buf[(*bn)++] = c;
			nd++;
			(*i)++;
		} else if (c == '_') {
			if (!nd || *i + 1 >= len || !is_digit(p[*i + 1]))
				return -1;
			(*i)++;
		} else {
			break;
		}
	}
	return nd;
}

/*
 * Python float() grammar (the ASCII part):
 *   ws* [+-]? ( "inf" | "infinity" | "nan"                       (any case)
 *             | digitpart? "." digitpart | digitpart "."? )
 *   ( [eE] [+-]? digitpart )? ws*
 * The grammar is checked here and strtod only converts the validated,
 * underscore-free copy, so its extras (hex, `nan(...)`, `infinit`) never
 * leak through.  Overflow gives ±inf and underflow 0, as in Python.
 */
/*
 * Clinger's fast path: `digits[.digits]` with a mantissa below 2^53 and at
 * most 22 fraction digits is m / 10^k with both operands exact, so one
 * IEEE division gives the correctly rounded result strtod would.  This is
 * the shape of nearly every profiler number and saves strtod's cost on the
 * parse hot path.  Returns 1 when it applied.
 */
static int fast_decimal(const char *s, size_t len, int neg, double *out)
{
	static const double pow10[23] = {
		1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
		1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
	};
	uint64_t m = 0;
	size_t i = 0, nd = 0, frac = 0;
	int dot = 0;
	if (len == 0 || len > 40)
		return 0;
	for (; i < len; i++) {
		char c = s[i];
		if (c >= '0' && c <= '9') {
			if (nd == 19)
				return 0;
			m = m * 10 + (uint64_t)(c - '0');
			if (m)
				nd++;
			if (dot)
				frac++;
		} else if (c == '.' && !dot) {
			dot = 1;
		} else {
			return 0;
		}
	}
	/* at least one digit on some side of the dot, as Python requires */
	if (len == (size_t)dot || m >= ((uint64_t)1 << 53) || frac > 22)
		return 0;
	double v = (double)m / pow10[frac];
	*out = neg ? -v : v;
	return 1;
}

double perfdb_stats_quantile_sorted(const double *x, size_t n, double q)
{
	if (!n)
		return 0.0;
	double pos = q * (double)(n - 1);
	size_t i = (size_t)pos;
	if (i + 1 >= n)
		return x[n - 1];
	double f = pos - (double)i;
	return x[i] + f * (x[i + 1] - x[i]);
}

void perfdb_stats_robust(double *x, size_t n, struct perfdb_stats *out, size_t *outliers)
{
	*outliers = 0;
	if (n < 4) {   /* no quartiles worth the name */
		perfdb_stats_compute(x, n, out);
		return;
	}
	qsort(x, n, sizeof(*x), cmp_double);
	double q1 = perfdb_stats_quantile_sorted(x, n, 0.25), q3 = perfdb_stats_quantile_sorted(x, n, 0.75);
	double med = perfdb_stats_quantile_sorted(x, n, 0.5), tukey = q3 + 3.0 * (q3 - q1);
	double fence = tukey > 2.0 * med ? tukey : 2.0 * med;
	size_t k = n;
	while (k > 1 && x[k - 1] > fence)
		k--;
	*outliers = n - k;
	perfdb_stats_compute(x, k, out);
}

int perfdb_stats_parse_double(const char *s, size_t len, double *out)
{
	if (!s)
		return -1;
	while (len && is_space(s[0])) {
		s++;
		len--;
	}
	while (len && is_space(s[len - 1]))
		len--;
	if (!len)
		return -1;

	size_t i = 0;
	int neg = 0;
	if (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-';
		i = 1;
	}
	if (fast_decimal(s + i, len - i, neg, out))
		return 0;
	if (eq_nocase(s + i, len - i, "inf") || eq_nocase(s + i, len - i, "infinity")) {
		*out = neg ? -INFINITY : INFINITY;
		return 0;
	}
	if (eq_nocase(s + i, len - i, "nan")) {
		*out = neg ? -NAN : NAN;
		return 0;
	}

	/* The copy is never longer than the input plus the NUL. */
	char stackbuf[128];
	char *buf = len < sizeof(stackbuf) ? stackbuf : malloc(len + 1);
	if (!buf)
		return -1;
	size_t bn = 0;
	int rc = -1;
	if (neg)
		buf[bn++] = '-';

	long ip = take_digits(s, len, &i, buf, &bn), fp = 0;
	if (ip < 0)
		goto done;
	if (i < len && s[i] == '.') {
		buf[bn++] = s[i++];
		fp = take_digits(s, len, &i, buf, &bn);
		if (fp < 0)
			goto done;
	}
	if (!ip && !fp)
		goto done;
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		buf[bn++] = s[i++];
		if (i < len && (s[i] == '+' || s[i] == '-'))
			buf[bn++] = s[i++];
		if (take_digits(s, len, &i, buf, &bn) <= 0)
			goto done;
	}
	if (i != len)
		goto done;
	buf[bn] = '\0';

	char *end;
	double v = strtod(buf, &end);
	if (*end == '\0') {
		*out = v; /* ERANGE still gives ±HUGE_VAL or 0: Python's value */
		rc = 0;
	}
done:
	if (buf != stackbuf)
		free(buf);
	return rc;
}

/* Non-finite values as Python prints them ('%.6f' % nan is 'nan'). */
static const char *nonfinite(double v)
{
	if (isnan(v))
		return "nan";
	return v < 0 ? "-inf" : "inf";
}

/* Like snprintf: returns the length of the full text; it is truncated
 * (still NUL-terminated) when that is >= cap. */
int perfdb_stats_format6(double v, char *buf, size_t cap)
{
	if (!isfinite(v))
		return snprintf(buf, cap, "%s", nonfinite(v));
	return snprintf(buf, cap, "%.6f", v);
}

/*
 * repr(round(v, 2)):
 *  1. round(v, 2) is the double nearest to v correctly rounded to two
 *     decimals, ties to even on the exact binary value.  glibc's "%.2f" is
 *     exact in the same way, and strtod reads the result back exactly.
 *  2. repr is the shortest digit string that reads back to the same
 *     double: try 1..17 significant digits.
 *  3. Python prints it in scientific form when the decimal exponent is
 *     < -4 or >= 16 (`1e+16`, `1.5e-05`), else positionally with at least
 *     one fractional digit (`100.0`, `0.01`).
 */
int perfdb_stats_format_round2(double v, char *buf, size_t cap)
{
	if (!isfinite(v))
		return snprintf(buf, cap, "%s", nonfinite(v));

	char tmp[400]; /* "%.2f" of DBL_MAX is 313 characters */
	snprintf(tmp, sizeof(tmp), "%.2f", v);
	double r = strtod(tmp, NULL);

	/* Shortest round trip, as d.ddde±XX. */
	char sci[40];
	for (int prec = 0; prec <= 16; prec++) {
		snprintf(sci, sizeof(sci), "%.*e", prec, r);
		if (strtod(sci, NULL) == r)
			break;
	}

	/* Split into sign, digits (no dot) and decimal exponent. */
	const char *p = sci;
	int neg = *p == '-';
	if (neg)
		p++;
	char digits[24];
	size_t nd = 0;
	for (; *p && *p != 'e'; p++)
		if (is_digit(*p))
			digits[nd++] = *p;
	digits[nd] = '\0';
	int exp10 = atoi(p + 1);

	/* %.*e never leaves trailing zeros except for a lone "0". */
	if (exp10 < -4 || exp10 >= 16)
		return snprintf(buf, cap, "%s", sci);

	char res[48];
	size_t k = 0;
	if (neg)
		res[k++] = '-';
	if (exp10 >= 0) {
		/* Integer part: digits[0..exp10], zero-padded. */
		for (int j = 0; j <= exp10; j++)
			res[k++] = (size_t)j < nd ? digits[j] : '0';
		res[k++] = '.';
		if ((size_t)exp10 + 1 < nd) {
			for (size_t j = (size_t)exp10 + 1; j < nd; j++)
				res[k++] = digits[j];
		} else {
			res[k++] = '0';
		}
	} else {
		res[k++] = '0';
		res[k++] = '.';
		for (int j = -1; j > exp10; j--)
			res[k++] = '0';
		for (size_t j = 0; j < nd; j++)
			res[k++] = digits[j];
	}
	res[k] = '\0';
	return snprintf(buf, cap, "%s", res);
}
