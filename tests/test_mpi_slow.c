/* gridzero under MPI, the long check (suite 'slow'): the tic-tac-toe acceptance of
 * issue 6 with the default config run on 2 ranks (mpirun -np 2 gridzero run --mpi): its
 * best model never loses to `perfect`, as a one-process run's does. Without MPI it says
 * why and passes. */
#include "mpi_util.h"

START_TEST(learns_tictactoe_on_2_ranks)
{
    MPI_SKIP_IF_UNAVAILABLE();
    char rd[300];
    static char out[65536];
    snprintf(rd, sizeof rd, "%s/tictactoe", dir);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = mpi_run(2, rd, 0, NULL, NULL, NULL, out, sizeof out);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    ck_assert_msg(rc == 0, "exit %d:\n%s", rc, out);
    ck_assert_msg(strstr(out, "on 2 MPI ranks") != NULL, "%s", out);
    fprintf(stderr, "learns_tictactoe_on_2_ranks: the default run took %.0f s\n", secs);
    check_learned_tictactoe(rd, "learns_tictactoe_on_2_ranks");
}
END_TEST

static Suite *mpi_slow_suite(void)
{
    Suite *s = suite_create("mpi_slow");
    TCase *tc = tcase_create("learning");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 3600);
    tcase_add_test(tc, learns_tictactoe_on_2_ranks);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(mpi_slow_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
