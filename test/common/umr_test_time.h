/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * Wall-clock limits of the test suites, scaled like UCX's test time
 * multiplier: UMR_TEST_TIME_MULTIPLIER=N gives every bounded wait N times
 * longer (slow, loaded or instrumented machines: valgrind, sanitizers).
 * Limits only catch hangs; no test asserts how fast something ran.
 */
#ifndef UMR_TEST_TIME_H_
#define UMR_TEST_TIME_H_

#include <cstdlib>

namespace umr_test {

inline double time_multiplier()
{
    const char *env = getenv("UMR_TEST_TIME_MULTIPLIER");
    double mult     = (env != nullptr) ? atof(env) : 1.0;

    return (mult > 0) ? mult : 1.0;
}

/* `seconds` of wall-clock limit, scaled by UMR_TEST_TIME_MULTIPLIER. */
inline double scaled(double seconds)
{
    return seconds * time_multiplier();
}

} // namespace umr_test

#endif
