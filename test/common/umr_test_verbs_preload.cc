/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * The rdma-core model as a preloadable library (see umr_test_verbs_preload.h):
 * which callers are the model's clients, and the configuration of the
 * simulated host this process is on, from the environment.
 *
 *   UMR_MODEL_JOB=NAME     the fabric table is shared by the processes of
 *                          the job (POSIX shared memory /umr-model-NAME; the
 *                          first creates it, whoever ends the job removes
 *                          it); unset: this process alone
 *   UMR_MODEL_HOSTS=N      simulated hosts (default 1); a process is on host
 *   UMR_MODEL_HOST=H       H, or else rank * N / size by the launcher's rank
 *                          and size (OMPI_COMM_WORLD_RANK/_SIZE, PMIX_RANK
 *                          with OMPI_COMM_WORLD_SIZE, PMI_RANK/PMI_SIZE):
 *                          consecutive ranks share a host
 *   UMR_MODEL_LINK=ib|roce link layer of every host (default ib)
 *   UMR_MODEL_HOST<H>=K=V,...  host H differs: link=ib|roce,
 *                          roce=v1|v2|v1v2 (its GID types, default v1v2),
 *                          ipv4=0|1 (an IPv4 address, default 1),
 *                          subnet=N (RoCE: global IPv6 GIDs
 *                          2001:db8:N::<H+1> besides the link-local ones,
 *                          which reach only hosts of subnet N; R33),
 *                          dead_gid=I (ibv_create_ah refuses GID entry I),
 *                          mtu=256..4096, lid=N (default H + 1),
 *                          pkeys=0xffff:0x8001 (its pkey table), fabric=N,
 *                          down_after=N (its link goes down once its NICs
 *                          moved N more RDMA work requests),
 *                          event=NAME@N (port event NAME once its NICs
 *                          moved N more RDMA work requests: client_reregister,
 *                          gid_change (a new entry of the GID table),
 *                          lid_change, pkey_change, port_err, port_active;
 *                          repeat the key for several, R32),
 *                          rd_atom=N (reads its NIC takes at once),
 *                          desc=BYTES (max_sq_desc_sz),
 *                          umr_fence=strong|small|none,
 *                          max_indirection=N, klm=N (log_max_klm_list_size),
 *                          atomic_umr=0 (umr_modify_atomic_disabled: every
 *                          UMR fails), devx=0 (DEVX commands fail EPERM),
 *                          ooo_sl_mask=MASK (the SLs routed adaptively):
 *                          what QUERY_HCA_CAP answers (R34)
 *   UMR_MODEL_DEVICES=N    mlx5 devices a host has (mlx5_0 ...; default 1)
 *   UMR_MODEL_DEV<D>_CPUS=MASK  local_cpus of device D (sysfs format,
 *                          "ff,00000000"); default: none given (all CPUs)
 *   UMR_MODEL_CHECK_FREE=0 UMRs on keys that are not free allowed (default
 *                          1: as man mlx5dv_wr_post asks, R23)
 *   UMR_MODEL_KERNEL=M.N   the hosts' Linux release, for how ibv_reg_mr pins
 *                          (R21b: before 6.2 a read-only registration of a
 *                          shared read-only mapping is refused); default
 *                          6.2
 *   UMR_MODEL_CLIENTS=PAT:PAT  objects (fnmatch on the file name) that see
 *                          the model's devices (default libuct_mlx5_umr.so*)
 *   UMR_MODEL_VERBOSE=1    one line on stderr: the host and its addresses
 *
 * Test-only: built in test/model, never installed.
 */
#include "umr_config.h"

#include "umr_test_verbs_fake.h"
#include "umr_test_verbs_model.h"
#include "umr_test_verbs_preload.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fnmatch.h>
#include <string.h>
#include <unistd.h>

#include <mutex>
#include <sstream>
#include <string>
#include <vector>

namespace umr_test {

namespace {

std::string env(const char *name, const char *dflt = "")
{
    const char *v = getenv(name);
    return (v != NULL) ? v : dflt;
}

long env_long(const char *name, long dflt)
{
    const char *v = getenv(name);
    char *end;
    long n;

    if ((v == NULL) || (*v == '\0')) {
        return dflt;
    }
    n = strtol(v, &end, 0);
    return (*end == '\0') ? n : dflt;
}

[[noreturn]] void config_error(const std::string &what)
{
    fprintf(stderr, "rdma-core model: %s\n", what.c_str());
    abort();
}

/* UMR_MODEL_KERNEL: whether release "M.N" is older than major.minor */
bool kernel_before(const std::string &release, unsigned major,
                   unsigned minor)
{
    unsigned m, n;

    if (sscanf(release.c_str(), "%u.%u", &m, &n) != 2) {
        config_error("UMR_MODEL_KERNEL=" + release + ": MAJOR.MINOR, e.g. 6.1");
    }
    return (m < major) || ((m == major) && (n < minor));
}

std::vector<std::string> split(const std::string &s, char sep)
{
    std::vector<std::string> out;
    std::string item;
    std::istringstream in(s);

    while (std::getline(in, item, sep)) {
        if (!item.empty()) {
            out.push_back(item);
        }
    }
    return out;
}

/* this process's host: UMR_MODEL_HOST, else from the launcher's rank */
uint32_t my_host(uint32_t hosts)
{
    long host = env_long("UMR_MODEL_HOST", -1), rank = -1, size = -1;
    static const char *ranks[][2] = {
        {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
        {"PMIX_RANK", "OMPI_COMM_WORLD_SIZE"},
        {"PMI_RANK", "PMI_SIZE"}
    };

    if (host >= 0) {
        return (uint32_t)host % hosts;
    }
    for (auto &r : ranks) {
        rank = env_long(r[0], -1);
        size = env_long(r[1], -1);
        if ((rank >= 0) && (size > 0)) {
            return (uint32_t)(rank * (long)hosts / size) % hosts;
        }
    }
    return 0;
}

struct host_cfg {
    bool        roce       = false;
    bool        v1         = true;
    bool        v2         = true;
    bool        ipv4       = true;
    long        subnet     = -1;
    std::vector<uint32_t> dead_gids;
    enum ibv_mtu mtu       = IBV_MTU_4096;
    long        lid        = -1;
    std::vector<uint16_t> pkeys;
    uint32_t    fabric     = 0;
    long        down_after = 0;
    long        rd_atom    = -1;
    long        desc       = -1;
    std::vector<model_host_sched> events;
    model_hca_caps hca     = model_hca_defaults();
};

/* event=NAME@N of a host spec (R32) */
model_host_sched parse_event(const std::string &var, const std::string &v)
{
    static const struct {
        const char          *name;
        enum ibv_event_type event;
    } names[] = {
        {"client_reregister", IBV_EVENT_CLIENT_REREGISTER},
        {"gid_change", IBV_EVENT_GID_CHANGE},
        {"lid_change", IBV_EVENT_LID_CHANGE},
        {"pkey_change", IBV_EVENT_PKEY_CHANGE},
        {"port_err", IBV_EVENT_PORT_ERR},
        {"port_active", IBV_EVENT_PORT_ACTIVE}
    };
    size_t at = v.find('@');
    std::string name = v.substr(0, at);
    char *end;

    for (const auto &n : names) {
        if ((name == n.name) && (at != std::string::npos)) {
            long wrs = strtol(v.c_str() + at + 1, &end, 0);
            if ((*end == '\0') && (wrs >= 0)) {
                return {n.event, (uint64_t)wrs, 0};
            }
        }
    }
    config_error(var + ": event=" + v + ": NAME@N, NAME one of "
                 "client_reregister, gid_change, lid_change, pkey_change, "
                 "port_err, port_active");
}

enum ibv_mtu parse_mtu(long bytes)
{
    switch (bytes) {
    case 256:  return IBV_MTU_256;
    case 512:  return IBV_MTU_512;
    case 1024: return IBV_MTU_1024;
    case 2048: return IBV_MTU_2048;
    case 4096: return IBV_MTU_4096;
    default:   config_error("mtu=" + std::to_string(bytes) +
                            ": one of 256, 512, 1024, 2048, 4096");
    }
}

host_cfg parse_host(uint32_t host)
{
    std::string var = "UMR_MODEL_HOST" + std::to_string(host);
    std::string link = env("UMR_MODEL_LINK", "ib");
    host_cfg c;

    c.roce = (link == "roce");
    if (!c.roce && (link != "ib")) {
        config_error("UMR_MODEL_LINK=" + link + ": ib or roce");
    }
    c.mtu = c.roce ? IBV_MTU_1024 : IBV_MTU_4096;
    for (const std::string &kv : split(env(var.c_str()), ',')) {
        size_t eq = kv.find('=');
        std::string k = kv.substr(0, eq);
        std::string v = (eq == std::string::npos) ? "" : kv.substr(eq + 1);
        long n        = strtol(v.c_str(), NULL, 0);
        if (k == "link") {
            c.roce = (v == "roce");
            c.mtu  = c.roce ? IBV_MTU_1024 : IBV_MTU_4096;
        } else if (k == "roce") {
            c.v1 = (v.find("v1") != std::string::npos);
            c.v2 = (v.find("v2") != std::string::npos);
        } else if (k == "ipv4") {
            c.ipv4 = (n != 0);
        } else if (k == "subnet") {
            c.subnet = n;
        } else if (k == "dead_gid") {
            c.dead_gids.push_back((uint32_t)n);
        } else if (k == "mtu") {
            c.mtu = parse_mtu(n);
        } else if (k == "lid") {
            c.lid = n;
        } else if (k == "pkeys") {
            for (const std::string &pk : split(v, ':')) {
                c.pkeys.push_back((uint16_t)strtol(pk.c_str(), NULL, 0));
            }
        } else if (k == "fabric") {
            c.fabric = (uint32_t)n;
        } else if (k == "down_after") {
            c.down_after = n;
        } else if (k == "event") {
            c.events.push_back(parse_event(var, v));
        } else if (k == "rd_atom") {
            c.rd_atom = n;
        } else if (k == "desc") {
            c.desc = n;
        } else if (k == "umr_fence") {
            c.hca.umr_fence = (v == "strong") ? MODEL_FENCE_STRONG :
                              (v == "none") ? MODEL_FENCE_NONE :
                              (v == "small") ? MODEL_FENCE_SMALL : 0xff;
            if (c.hca.umr_fence == 0xff) {
                config_error(var + ": umr_fence=strong, small or none");
            }
        } else if (k == "max_indirection") {
            c.hca.max_indirection = (uint8_t)n;
        } else if (k == "klm") {
            c.hca.log_max_klm_list_size = (uint8_t)n;
        } else if (k == "atomic_umr") {
            c.hca.umr_modify_atomic_disabled = (n == 0);
        } else if (k == "ooo_sl_mask") {
            c.hca.ooo_sl_cap  = true;
            c.hca.ooo_sl_mask = (uint16_t)n;
        } else if (k == "devx") {
            c.hca.devx_errno = (n == 0) ? EPERM : 0;
        } else {
            config_error(var + ": unknown '" + k + "'");
        }
    }
    if (c.roce && !c.v1 && !c.v2) {
        config_error(var + ": roce=v1, v2 or v1v2");
    }
    return c;
}

std::string gid_str(const union ibv_gid &gid)
{
    char buf[INET6_ADDRSTRLEN];
    inet_ntop(AF_INET6, gid.raw, buf, sizeof(buf));
    return buf;
}

} // namespace

bool preload_is_client(const void *caller)
{
    static std::vector<std::string> pats =
            split(env("UMR_MODEL_CLIENTS", "libuct_mlx5_umr.so*"), ':');
    Dl_info info;
    const char *base;

    if ((dladdr(caller, &info) == 0) || (info.dli_fname == NULL)) {
        return false;
    }
    base = strrchr(info.dli_fname, '/');
    base = (base != NULL) ? base + 1 : info.dli_fname;
    for (const std::string &p : pats) {
        if (fnmatch(p.c_str(), base, 0) == 0) {
            return true;
        }
    }
    return false;
}

void preload_init()
{
    static std::once_flag once;

    std::call_once(once, []() {
        uint32_t hosts = (uint32_t)std::max(1L, env_long("UMR_MODEL_HOSTS",
                                                         1));
        uint32_t host  = my_host(hosts);
        host_cfg c     = parse_host(host);
        long ndev      = std::max(1L, env_long("UMR_MODEL_DEVICES", 1));
        std::string job = env("UMR_MODEL_JOB");
        uint16_t lid   = (c.lid >= 0) ? (uint16_t)c.lid : (uint16_t)(host + 1);
        fake_port port;
        int ret;

        if (!job.empty()) {
            ret = model_attach_shared(("/umr-model-" + job).c_str());
            if (ret != 0) {
                config_error("UMR_MODEL_JOB=" + job + ": " + strerror(ret));
            }
        }

        /* defaults(), not reset(): the hosts' state is the job's */
        fake().defaults();
        fake().model      = true;
        fake().host       = host;
        fake().fabric     = c.fabric;
        fake().subnet     = (c.subnet >= 0) ? (uint32_t)c.subnet : 0;
        fake().check_free = env_long("UMR_MODEL_CHECK_FREE", 1) != 0;
        fake().kernel_before_6_2 = kernel_before(env("UMR_MODEL_KERNEL", "6.2"),
                                                 6, 2);
        if (c.desc > 0) {
            fake().max_sq_desc_sz = (uint32_t)c.desc;
        }
        if (c.rd_atom > 0) {
            fake().dev_attr.orig_attr.max_qp_rd_atom = (int)c.rd_atom;
        }
        fake().hca = c.hca;

        port = c.roce ? fake_roce_host_port(host, c.mtu, c.v1, c.v2, c.ipv4,
                                            (int)c.subnet) :
                        fake_ib_port(lid, c.mtu);
        port.dead_gids = c.dead_gids;
        if (!c.pkeys.empty()) {
            port.pkeys.clear();
            for (uint16_t pk : c.pkeys) {
                port.pkeys.push_back(htons(pk));
            }
            port.attr.pkey_tbl_len = port.pkeys.size();
        }
        fake().ports = {port};

        fake().devices.clear();
        for (long d = 0; d < ndev; ++d) {
            std::string cpus = env(("UMR_MODEL_DEV" + std::to_string(d) +
                                    "_CPUS").c_str());
            fake().devices.push_back({"mlx5_" + std::to_string(d), true,
                                      cpus});
        }
        if (c.down_after > 0) {
            model_host_link_down_after(host, (uint64_t)c.down_after);
        }
        for (model_host_sched &e : c.events) {
            e.arg = port.gids.size();     /* gid_change: one entry more */
        }
        if (model_host_events_after(host, c.events) != 0) {
            config_error("UMR_MODEL_HOST" + std::to_string(host) +
                         ": at most 8 events");
        }

        if (env_long("UMR_MODEL_VERBOSE", 0)) {
            fprintf(stderr, "rdma-core model: pid %d on host %u of %u (%s, "
                    "lid %u, gid %s, %ld device%s%s)\n", (int)getpid(), host,
                    hosts, c.roce ? "RoCE" : "IB", c.roce ? 0 : lid,
                    gid_str(port.gids.back().gid).c_str(), ndev,
                    (ndev > 1) ? "s" : "",
                    job.empty() ? ", no job: this process alone" : "");
        }
    });
}

} // namespace umr_test
