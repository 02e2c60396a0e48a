/* types.c: element types, block types, promotion and broadcasting. */
#include "lang.h"

#include <stdio.h>
#include <string.h>

static const char *const scalar_names[SK_COUNT] = {
#define SCALAR_NAME(name, spelling, bits) [SK_##name] = spelling,
	BLK_SCALARS(SCALAR_NAME)
#undef SCALAR_NAME
};

static const int scalar_bit_widths[SK_COUNT] = {
#define SCALAR_BITS(name, spelling, bits) [SK_##name] = bits,
	BLK_SCALARS(SCALAR_BITS)
#undef SCALAR_BITS
};

const char *scalar_name(ScalarKind k) { return k < SK_COUNT ? scalar_names[k] : "?"; }
int scalar_bits(ScalarKind k) { return k < SK_COUNT ? scalar_bit_widths[k] : 0; }

bool scalar_from_name(const char *name, ScalarKind *out)
{
	for (int k = 0; k < SK_COUNT; k++)
		if (strcmp(scalar_names[k], name) == 0) {
			*out = (ScalarKind)k;
			return true;
		}
	return false;
}

Type type_scalar(ScalarKind k) { return (Type){.scalar = (uint8_t)k}; }

Type type_block(Type elem, int rank, const int32_t *shape)
{
	Type t = type_elem(elem);
	t.rank = (uint8_t)rank;
	for (int i = 0; i < rank; i++)
		t.shape[i] = shape[i];
	return t;
}

Type type_elem(Type t)
{
	Type e = {.scalar = t.scalar, .ptr = t.ptr};
	return e;
}

Type type_pointee(Type t)
{
	if (t.ptr)
		t.ptr--;
	return t;
}

Type type_pointer_to(Type t)
{
	t.ptr++;
	return t;
}

bool type_eq(Type a, Type b)
{
	if (a.scalar != b.scalar || a.ptr != b.ptr || a.rank != b.rank)
		return false;
	for (int i = 0; i < a.rank; i++)
		if (a.shape[i] != b.shape[i])
			return false;
	return true;
}

bool type_is_ptr(Type t) { return t.ptr > 0; }

bool type_is_float(Type t) { return !t.ptr && scalar_is_float((ScalarKind)t.scalar); }

int type_bytes(Type t)
{
	if (t.ptr)
		return 8;
	int b = scalar_bits((ScalarKind)t.scalar) / 8;
	return b ? b : 1;
}

const char *type_cstr(Type t)
{
	static _Thread_local char bufs[4][96];
	static _Thread_local int next;
	char *b = bufs[next++ & 3];
	StrBuf sb = {0};
	type_print(t, &sb);
	snprintf(b, 96, "%s", sb.data ? sb.data : "?");
	sb_free(&sb);
	return b;
}

int64_t type_numel(Type t)
{
	int64_t n;
	shape_numel(t.rank, t.shape, &n);
	return n;
}

bool shape_numel(int rank, const int32_t *shape, int64_t *n)
{
	int64_t p = 1;
	for (int i = 0; i < rank; i++) {
		if (shape[i] < 0 || __builtin_mul_overflow(p, (int64_t)shape[i], &p)) {
			*n = INT64_MAX;
			return false;
		}
	}
	*n = p;
	return true;
}

void shape_count_print(int rank, const int32_t *shape, StrBuf *out)
{
	int64_t n;
	if (shape_numel(rank, shape, &n)) {
		sb_printf(out, "%lld", (long long)n);
		return;
	}
	/* too many for an int64_t: the exact count in a double (block sizes
	 * are powers of two, so it holds them exactly) */
	double d = 1;
	for (int i = 0; i < rank; i++)
		d *= shape[i] < 0 ? 0 : (double)shape[i];
	sb_printf(out, "%.0f", d);
}

void type_print(Type t, StrBuf *out)
{
	for (int i = 0; i < t.ptr; i++)
		sb_putc(out, '*');
	sb_puts(out, scalar_name((ScalarKind)t.scalar));
	if (t.rank) {
		sb_putc(out, '[');
		for (int i = 0; i < t.rank; i++)
			sb_printf(out, "%s%d", i ? ", " : "", (int)t.shape[i]);
		sb_putc(out, ']');
	}
}

const char *type_str(Type t, Arena *a)
{
	StrBuf sb = {0};
	type_print(t, &sb);
	const char *s = sb.data ? arena_strndup(a, sb.data, sb.len) : "?";
	sb_free(&sb);
	return s ? s : "?";
}

/* Kinds, ordered: a literal of a kind at or below the other operand's kind
 * takes the other operand's type. Signed and unsigned integers are one
 * kind, as in Triton: `x_u8 % 5` computes in u8. */
static int kind_rank(ScalarKind k)
{
	if (k == SK_I1)
		return 0;
	if (scalar_is_int(k))
		return 1;
	return 2;
}

static ScalarKind promote_int(ScalarKind a, ScalarKind b)
{
	int wa = scalar_bits(a), wb = scalar_bits(b);
	bool ua = scalar_is_unsigned(a), ub = scalar_is_unsigned(b);
	if (ua == ub)
		return wa >= wb ? a : b;
	/* As C's usual arithmetic conversions: unsigned wins at equal or greater width. */
	if (ua)
		return wa >= wb ? a : b;
	return wb >= wa ? b : a;
}

bool promote_arith(ScalarKind a, bool a_lit, ScalarKind b, bool b_lit, bool div_or_mod,
                   ScalarKind *out, const char **why)
{
	*why = NULL;
	if (a_lit != b_lit) {
		ScalarKind lit = a_lit ? a : b, other = a_lit ? b : a;
		if (kind_rank(lit) <= kind_rank(other)) {
			*out = div_or_mod && (other == SK_F16 || other == SK_BF16) ? SK_F32 : other;
			return true;
		}
	}
	if (a == SK_F64 || b == SK_F64) {
		*out = SK_F64;
	} else if (a == SK_F32 || b == SK_F32) {
		*out = SK_F32;
	} else if (a == SK_F16 || b == SK_F16) {
		*out = div_or_mod || a == SK_BF16 || b == SK_BF16 ? SK_F32 : SK_F16;
	} else if (a == SK_BF16 || b == SK_BF16) {
		/* bf16 with bf16 or with an integer (rule 3: the float) */
		bool other_float = scalar_is_float(a == SK_BF16 ? b : a);
		*out = (a == b || !other_float) && !div_or_mod ? SK_BF16 : SK_F32;
	} else if (scalar_is_float(a) && scalar_is_float(b)) {
		*out = a == b ? a : SK_F16; /* two fp8 kinds */
	} else if (scalar_is_float(a) || scalar_is_float(b)) {
		*out = scalar_is_float(a) ? a : b; /* fp8 with an integer */
	} else {
		if (div_or_mod && a != SK_I1 && b != SK_I1 && scalar_is_unsigned(a) != scalar_is_unsigned(b)) {
			*why = "operands of '/' and '%' must have the same signedness; cast one of them";
			return false;
		}
		*out = promote_int(a, b);
	}
	return true;
}

bool broadcast_shapes(Type a, Type b, int *rank, int32_t shape[BLK_MAX_RANK])
{
	int r = a.rank > b.rank ? a.rank : b.rank;
	for (int i = 0; i < r; i++) {
		int ia = a.rank - r + i, ib = b.rank - r + i;
		int32_t da = ia >= 0 ? a.shape[ia] : 1, db = ib >= 0 ? b.shape[ib] : 1;
		if (da != db && da != 1 && db != 1)
			return false;
		shape[i] = da == 1 ? db : da;
	}
	for (int i = r; i < BLK_MAX_RANK; i++)
		shape[i] = 0;
	*rank = r;
	return true;
}
