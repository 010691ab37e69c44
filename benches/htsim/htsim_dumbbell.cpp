// tcplab's 10 Gb/s dumbbell (crates/tcplab-core/examples/dumbbell.rs) built from htsim's
// library: N TcpSrc/TcpSink pairs (htsim's NewReno) from one sender host to one receiver host,
//
//   s --100 Gb/s, 10 us-- l --10 Gb/s, 10 us-- r --100 Gb/s, 10 us-- d
//
// with a queue at the head of every link in each direction (data one way, ACKs the other).
// This file is tcplab's; it only uses htsim's public classes (TcpSrc, TcpSink, Queue, Pipe,
// Route, EventList, TcpRtxTimerScanner) and is compiled against htsim's source by setup.sh.
// The differences from tcplab's model that htsim leaves are listed in README.md.
//
//   htsim_dumbbell FLOWS SECONDS [-iw PKTS] [-ssthresh PKTS] [-queue PKTS] [-hostqueue PKTS]
//
// Prints one line, `htsim flows ... data pkts ... wall ...`, that compare.py reads. The wall
// time is that of the event loop alone (as tcplab's example times `sim.run()` alone).

#include <chrono>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "config.h"
#include "eventlist.h"
#include "network.h"
#include "pipe.h"
#include "queue.h"
#include "route.h"
#include "tcp.h"

static void usage() {
    std::cerr << "usage: htsim_dumbbell FLOWS SECONDS [-iw PKTS] [-ssthresh PKTS (0 = unlimited)]"
                 " [-queue PKTS] [-hostqueue PKTS]\n";
    std::exit(2);
}

int main(int argc, char** argv) {
    if (argc < 3) usage();
    int flows = std::atoi(argv[1]);
    double seconds = std::atof(argv[2]);
    // Defaults: tcplab's dumbbell. Initial window 3 segments (tcplab's RFC 5681 rule for a
    // 1460-byte MSS; htsim's own default is 10), initial ssthresh unlimited (htsim's: 100
    // packets), 1000 packets waiting at every queue.
    uint32_t iw = 3, ssthresh = 0;
    int queue_pkts = 1000, hostqueue_pkts = 1000;
    for (int i = 3; i < argc; i += 2) {
        if (i + 1 >= argc) usage();
        if (!std::strcmp(argv[i], "-iw")) iw = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "-ssthresh")) ssthresh = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "-queue")) queue_pkts = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "-hostqueue")) hostqueue_pkts = std::atoi(argv[i + 1]);
        else usage();
    }
    if (flows <= 0 || seconds <= 0 || iw == 0) usage();

    // 1500-byte data packets (htsim's default; its "MSS" is the whole packet: no headers are
    // modelled, so each one carries what tcplab's 1460-byte segment plus 40 bytes of TCP/IP
    // header carries on the wire). ACKs are 40 bytes (TcpAck::ACKSIZE).
    Packet::set_packet_size(1500);
    const uint32_t mss = Packet::data_packet_size();

    EventList eventlist;
    eventlist.setEndtime(timeFromSec(seconds));

    // htsim's Queue limits bytes, the packet being serialized included; tcplab's limits the
    // packets waiting, the one being serialized not counted. With 1500-byte packets N waiting
    // plus one in service is (N + 1) * 1500 bytes.
    const mem_b bottleneck_buf = memFromPkt(queue_pkts + 1);
    const mem_b host_buf = memFromPkt(hostqueue_pkts + 1);
    const linkspeed_bps access = speedFromGbps(100), core = speedFromGbps(10);
    const simtime_picosec delay = timeFromUs(10.0);

    // Forward (data): s->l, l->r (the bottleneck), r->d. Reverse (ACKs): d->r, r->l, l->s.
    Queue q_sl(access, host_buf, eventlist, nullptr), q_lr(core, bottleneck_buf, eventlist, nullptr),
        q_rd(access, host_buf, eventlist, nullptr);
    Queue q_dr(access, host_buf, eventlist, nullptr), q_rl(core, bottleneck_buf, eventlist, nullptr),
        q_ls(access, host_buf, eventlist, nullptr);
    Pipe p_sl(delay, eventlist), p_lr(delay, eventlist), p_rd(delay, eventlist);
    Pipe p_dr(delay, eventlist), p_rl(delay, eventlist), p_ls(delay, eventlist);
    q_sl.setName("s->l"); q_lr.setName("l->r"); q_rd.setName("r->d");
    q_dr.setName("d->r"); q_rl.setName("r->l"); q_ls.setName("l->s");

    // htsim's retransmission timers are checked by a scanner; every htsim TCP example scans
    // every 10 ms.
    TcpRtxTimerScanner scanner(timeFromMs(10), eventlist);

    std::vector<TcpSrc*> srcs;
    std::vector<TcpSink*> sinks;
    for (int i = 0; i < flows; i++) {
        TcpSrc* src = new TcpSrc(nullptr, nullptr, eventlist);
        TcpSink* sink = new TcpSink();
        src->setName("f" + std::to_string(i));
        sink->setName("f" + std::to_string(i) + ".sink");
        src->set_cwnd(iw * mss);
        src->set_ssthresh(ssthresh ? ssthresh * mss : 0xffffffffu);
        scanner.registerTcp(*src);

        Route* out = new Route();
        out->push_back(&q_sl); out->push_back(&p_sl);
        out->push_back(&q_lr); out->push_back(&p_lr);
        out->push_back(&q_rd); out->push_back(&p_rd);
        out->push_back(sink);
        Route* back = new Route();
        back->push_back(&q_dr); back->push_back(&p_dr);
        back->push_back(&q_rl); back->push_back(&p_rl);
        back->push_back(&q_ls); back->push_back(&p_ls);
        back->push_back(src);
        src->connect(*out, *back, *sink, 0);  // every flow starts at t = 0, unlimited data
        srcs.push_back(src);
        sinks.push_back(sink);
    }

    // htsim writes a line to cout on every retransmission timeout; count them instead.
    std::ostringstream log;
    std::streambuf* saved = std::cout.rdbuf(log.rdbuf());
    uint64_t events = 0;
    auto t0 = std::chrono::steady_clock::now();
    while (eventlist.doNextEvent()) events++;
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout.rdbuf(saved);

    uint64_t timeouts = 0;
    {
        std::istringstream in(log.str());
        std::string line;
        while (std::getline(in, line))
            if (line.find(" RTO ") != std::string::npos) timeouts++;
    }
    uint64_t data = 0, delivered = 0, recoveries = 0, min_d = UINT64_MAX, max_d = 0;
    for (int i = 0; i < flows; i++) {
        data += srcs[i]->_packets_sent / mss;  // bytes of data packets sent, retransmissions included
        recoveries += srcs[i]->_drops;         // entries into fast recovery
        // The sink's cumulative ACK counts the 1-byte SYN and then whole packets.
        uint64_t d = sinks[i]->_cumulative_ack > 0 ? (sinks[i]->_cumulative_ack - 1) / mss : 0;
        delivered += d;
        min_d = std::min(min_d, d);
        max_d = std::max(max_d, d);
    }
    // Goodput as tcplab counts it: 1460 bytes of payload per 1500-byte packet delivered in order.
    auto mbps = [&](uint64_t pkts) { return pkts * 1460.0 * 8 / seconds / 1e6; };
    std::printf(
        "htsim flows %d sim %gs data pkts %llu events %llu wall %.3fs %.2f M data pkts/s"
        " delivered pkts %llu goodput %.1f Mb/s per-flow %.1f-%.1f Mb/s bottleneck drops %d"
        " other drops %d fast recoveries %llu timeouts %llu\n",
        flows, seconds, (unsigned long long)data, (unsigned long long)events, wall, data / wall / 1e6,
        (unsigned long long)delivered, mbps(delivered), mbps(min_d), mbps(max_d), q_lr.num_drops(),
        q_sl.num_drops() + q_rd.num_drops() + q_dr.num_drops() + q_rl.num_drops() + q_ls.num_drops(),
        (unsigned long long)recoveries, (unsigned long long)timeouts);
    return 0;
}
