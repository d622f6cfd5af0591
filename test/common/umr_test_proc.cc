/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * Cross-process test helper (see umr_test_proc.h).
 */
#include "umr_test_proc.h"
#include "umr_test_time.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace umr_test {

const double proc::DEFAULT_TIMEOUT = 60.0;

static double now_sec()
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

double proc::scaled(double seconds)
{
    return umr_test::scaled(seconds);
}

proc::proc(body_t body) : m_pid(-1), m_is_child(false), m_reaped(false),
                          m_rfd(-1), m_wfd(-1)
{
    int p2c[2], c2p[2];
    int ret;

    if (pipe2(p2c, O_CLOEXEC) || pipe2(c2p, O_CLOEXEC)) {
        ADD_FAILURE() << "pipe2: " << strerror(errno);
        return;
    }

    fflush(stdout);
    fflush(stderr);
    m_pid = fork();
    if (m_pid < 0) {
        ADD_FAILURE() << "fork: " << strerror(errno);
        return;
    }

    if (m_pid == 0) {
        /* child */
        m_pid      = getpid();
        m_is_child = true;
        m_rfd      = p2c[0];
        m_wfd      = c2p[1];
        close(p2c[1]);
        close(c2p[0]);
        ret = body(*this);
        if (::testing::Test::HasFailure() && (ret == 0)) {
            ret = 1;
        }
        fflush(stdout);
        fflush(stderr);
        _exit(ret);
    }

    m_rfd = c2p[0];
    m_wfd = p2c[1];
    close(p2c[0]);
    close(c2p[1]);
}

proc::~proc()
{
    if (!m_is_child && (m_pid > 0) && !m_reaped) {
        kill();
    }

    if (m_rfd >= 0) {
        close(m_rfd);
    }
    if (m_wfd >= 0) {
        close(m_wfd);
    }
}

bool proc::io(bool out, void *buf, size_t len, double timeout)
{
    double deadline = now_sec() + scaled(timeout);
    char *p         = static_cast<char*>(buf);
    struct pollfd pfd;
    ssize_t n;
    int ms;

    pfd.fd     = out ? m_wfd : m_rfd;
    pfd.events = out ? POLLOUT : POLLIN;
    if (pfd.fd < 0) {
        return false;
    }

    while (len > 0) {
        ms = static_cast<int>((deadline - now_sec()) * 1000);
        if (ms <= 0) {
            fprintf(stderr, "umr_test::proc: %s of %zu bytes timed out\n",
                    out ? "send" : "recv", len);
            return false;
        }

        n = poll(&pfd, 1, ms);
        if ((n < 0) && (errno == EINTR)) {
            continue;
        } else if (n <= 0) {
            continue; /* timeout is re-checked above */
        }

        n = out ? write(pfd.fd, p, len) : read(pfd.fd, p, len);
        if (n < 0) {
            if ((errno == EINTR) || (errno == EAGAIN)) {
                continue;
            }
            return false;
        } else if (n == 0) {
            return false; /* the other side closed: it is gone */
        }

        p   += n;
        len -= n;
    }

    return true;
}

bool proc::send(const void *buf, size_t len, double timeout)
{
    return io(true, const_cast<void*>(buf), len, timeout);
}

bool proc::recv(void *buf, size_t len, double timeout)
{
    return io(false, buf, len, timeout);
}

int proc::wait_status(double timeout)
{
    double deadline = now_sec() + scaled(timeout);
    int status      = 0;
    pid_t ret;

    if (m_is_child || (m_pid <= 0) || m_reaped) {
        return -1;
    }

    for (;;) {
        ret = waitpid(m_pid, &status, WNOHANG);
        if (ret == m_pid) {
            m_reaped = true;
            return status;
        } else if ((ret < 0) && (errno != EINTR)) {
            m_reaped = true;
            return -1;
        }

        if (now_sec() > deadline) {
            kill();
            return -1;
        }

        usleep(1000);
    }
}

::testing::AssertionResult proc::join(double timeout)
{
    int status;

    if (m_is_child || (m_pid <= 0)) {
        return ::testing::AssertionFailure() << "no child to join";
    }

    status = wait_status(timeout);
    if (status == -1) {
        return ::testing::AssertionFailure()
               << "child " << m_pid << " did not exit within "
               << scaled(timeout) << " s (killed)";
    }

    if (WIFEXITED(status) && (WEXITSTATUS(status) == 0)) {
        return ::testing::AssertionSuccess();
    }

    return ::testing::AssertionFailure() << "child " << m_pid << " "
                                         << status_str(status);
}

void proc::kill(int sig)
{
    int status;

    if (m_is_child || (m_pid <= 0) || m_reaped) {
        return;
    }

    ::kill(m_pid, sig);
    while ((waitpid(m_pid, &status, 0) < 0) && (errno == EINTR)) {
    }
    m_reaped = true;
}

std::string proc::status_str(int status)
{
    char buf[64];

    if (WIFEXITED(status)) {
        snprintf(buf, sizeof(buf), "exited with code %d", WEXITSTATUS(status));
    } else if (WIFSIGNALED(status)) {
        snprintf(buf, sizeof(buf), "killed by signal %d (%s)",
                 WTERMSIG(status), strsignal(WTERMSIG(status)));
    } else {
        snprintf(buf, sizeof(buf), "waitpid status 0x%x", status);
    }

    return buf;
}

} // namespace umr_test
