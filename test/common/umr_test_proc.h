/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * Cross-process test helper: fork a child connected to the parent by two
 * pipes, exchange fixed-size messages with timeouts, and check how the child
 * ended (waitpid status). Used by the sw engine tests and the transport tests.
 *
 *     umr_test::proc child([](umr_test::proc &p) {
 *         uint64_t v;
 *         if (!p.recv(v)) return 1;
 *         p.send(v + 1);
 *         return 0;               // the child's exit code, 0 = passed
 *     });
 *     child.send(uint64_t(41));
 *     ASSERT_TRUE(child.recv(v));
 *     EXPECT_TRUE(child.join());  // exited with 0, within the timeout
 *
 * The child runs `body` and leaves with _exit(): no gtest teardown, no atexit
 * handlers, no double-flushed stdio. A gtest failure inside the child turns
 * its exit code non-zero, so the parent's join() reports it. A proc that is
 * destroyed without join() kills and reaps its child: nothing is left behind.
 */
#ifndef UMR_TEST_PROC_H_
#define UMR_TEST_PROC_H_

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <sys/types.h>

namespace umr_test {

class proc {
public:
    typedef std::function<int(proc&)> body_t;

    /* Timeouts in seconds; scaled by UMR_TEST_TIME_MULTIPLIER if set. */
    static const double DEFAULT_TIMEOUT;

    explicit proc(body_t body);
    ~proc();

    proc(const proc&) = delete;
    proc &operator=(const proc&) = delete;

    pid_t pid() const { return m_pid; }   /* the child's pid (both sides) */
    bool  is_child() const { return m_is_child; }

    /* Exactly `len` bytes to the other side; false on error or timeout. */
    bool send(const void *buf, size_t len, double timeout = DEFAULT_TIMEOUT);
    bool recv(void *buf, size_t len, double timeout = DEFAULT_TIMEOUT);

    template <typename T> bool send(const T &v, double t = DEFAULT_TIMEOUT) {
        return send(&v, sizeof(v), t);
    }
    template <typename T> bool recv(T &v, double t = DEFAULT_TIMEOUT) {
        return recv(&v, sizeof(v), t);
    }

    /* Parent: wait for the child; success only if it exited with code 0.
     * A child still running after `timeout` is killed and reported. */
    ::testing::AssertionResult join(double timeout = DEFAULT_TIMEOUT);

    /* Parent: wait for the child and return its raw waitpid status, or -1
     * if it had to be killed after the timeout. */
    int wait_status(double timeout = DEFAULT_TIMEOUT);

    /* Parent: kill the child (default SIGKILL) and reap it. */
    void kill(int sig = 9);

    static std::string status_str(int status);
    static double scaled(double seconds);

private:
    bool io(bool out, void *buf, size_t len, double timeout);

    pid_t m_pid;
    bool  m_is_child;
    bool  m_reaped;
    int   m_rfd;
    int   m_wfd;
};

} // namespace umr_test

#endif
