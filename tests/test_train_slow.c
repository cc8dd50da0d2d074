/* The trainer's slow checks: test_train.c's oracles on larger nets (see GZ_TRAIN_SLOW
 * there). Run with `meson test -C build --suite slow` (scripts/test --slow). */
#define GZ_TRAIN_SLOW 1
#include "test_train.c"
