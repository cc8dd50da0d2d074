/* net_train.c — the whole network's training pass (see net_train.h). The body is in
 * net_train_impl.h, compiled in float (the trainer) and in double (the _f64 names: the
 * tests' finite-difference oracle for the whole network). */
#include "net_train.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layers.h"

#define R float
#define F(name) name
#define TN train_net
#include "net_train_impl.h"
#undef R
#undef F
#undef TN

#define R double
#define F(name) name##_f64
#define TN train_net_f64
#include "net_train_impl.h"
#undef R
#undef F
#undef TN
