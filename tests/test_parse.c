/* test_parse.c — engine/parse: integers from input are range-checked, never wrapped. */
#include <check.h>
#include <limits.h>
#include <stdlib.h>

#include "engine/parse.h"

START_TEST(whole_numbers)
{
    long long v = 7;
    ck_assert_int_eq(parse_ll("42", 0, 100, &v), 0);
    ck_assert_int_eq(v, 42);
    ck_assert_int_eq(parse_ll("-5", -10, 10, &v), 0);
    ck_assert_int_eq(v, -5);
    ck_assert_int_eq(parse_ll("+9", 0, 10, &v), 0);
    ck_assert_int_eq(v, 9);
    ck_assert_int_eq(parse_ll("9223372036854775807", 0, LLONG_MAX, &v), 0);
    ck_assert(v == LLONG_MAX);
    ck_assert_int_eq(parse_ll("-9223372036854775808", LLONG_MIN, 0, &v), 0);
    ck_assert(v == LLONG_MIN);
    v = 7;
    /* refused, *out untouched: wrap-around, range, junk, empty */
    const char *bad[] = {"9223372036854775808", "-9223372036854775809", "4294967297",
                         "101", "-1", "", "+", "-", " 5", "5 ", "5x", "0x10", "1e3", "99999999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ck_assert_msg(parse_ll(bad[i], 0, i < 2 ? LLONG_MAX : 100, &v) < 0, "\"%s\" accepted", bad[i]);
        ck_assert_int_eq(v, 7);
    }
    ck_assert_int_eq(parse_ll(NULL, 0, 1, &v), -1);
    int n = 3;
    ck_assert_int_eq(parse_int("4294967297", INT_MIN, INT_MAX, &n), -1); /* 2^32 + 1 */
    ck_assert_int_eq(parse_int("2147483648", INT_MIN, INT_MAX, &n), -1);
    ck_assert_int_eq(n, 3);
    ck_assert_int_eq(parse_int("2147483647", INT_MIN, INT_MAX, &n), 0);
    ck_assert_int_eq(n, INT_MAX);
}
END_TEST

START_TEST(prefixes)
{
    long long v = 0;
    const char *end;
    const char *s = "12,34";
    ck_assert_int_eq(parse_ll_prefix(s, &end, 0, 100, &v), 0);
    ck_assert_int_eq(v, 12);
    ck_assert_ptr_eq(end, s + 2);
    /* too large: refused, and the end is still past the digits */
    s = "4294967297 ,0";
    ck_assert_int_eq(parse_ll_prefix(s, &end, 0, INT_MAX, &v), -1);
    ck_assert_ptr_eq(end, s + 10);
    ck_assert_int_eq(v, 12);
    s = "x1";
    ck_assert_int_eq(parse_ll_prefix(s, &end, 0, 9, &v), -1);
    ck_assert_ptr_eq(end, s);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("parse");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, whole_numbers);
    tcase_add_test(tc, prefixes);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
