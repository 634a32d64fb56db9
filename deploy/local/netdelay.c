/*
 * sluice-netdelay: a slow link without netem. Holds every packet iptables hands to an NFQUEUE for a delay with
 * jitter, then lets it go (verdicts may be given out of order, so jitter reorders packets as a real link can).
 *
 *   sluice-netdelay QUEUE DELAY_MS JITTER_MS MAX_SECONDS
 *
 * It exits after MAX_SECONDS (a fault is always bounded) or on SIGTERM/SIGINT, releasing what it holds. Run it in
 * the network namespace whose packets it delays (NFQUEUE is per namespace), with a rule such as
 *   iptables -A OUTPUT -d PEER -j NFQUEUE --queue-num QUEUE --queue-bypass
 * (--queue-bypass: when it is not running, packets pass). deploy/local/netns.sh builds and starts it.
 *
 * Build: gcc -O2 -o sluice-netdelay netdelay.c -lnetfilter_queue   (Debian: libnetfilter-queue-dev)
 */
#include <arpa/inet.h> /* before the netfilter headers: they would define in_addr again */
#include <errno.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <linux/netfilter.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#define MAX_HELD 65536

struct held {
    uint32_t id;
    long long due_ms;
};

static struct held held[MAX_HELD];
static int n_held;
static long delay_ms;
static long jitter_ms;
static volatile sig_atomic_t stopping;

static long long now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long) t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int on_packet(struct nfq_q_handle *queue, struct nfgenmsg *msg, struct nfq_data *data, void *unused) {
    (void) msg;
    (void) unused;
    struct nfqnl_msg_packet_hdr *header = nfq_get_msg_packet_hdr(data);
    if (header == NULL) {
        return 0;
    }
    uint32_t id = ntohl(header->packet_id);
    if (n_held == MAX_HELD) { /* full: let it through now rather than lose it */
        return nfq_set_verdict(queue, id, NF_ACCEPT, 0, NULL);
    }
    long jitter = jitter_ms > 0 ? (random() % (2 * jitter_ms + 1)) - jitter_ms : 0;
    long wait = delay_ms + jitter;
    held[n_held].id = id;
    held[n_held].due_ms = now_ms() + (wait > 0 ? wait : 0);
    n_held++;
    return 0;
}

/* Releases every packet due by now (all of them when everything is true); returns ms until the next is due, or -1. */
static int release(struct nfq_q_handle *queue, int everything) {
    long long now = now_ms();
    long long next = -1;
    for (int i = 0; i < n_held;) {
        if (everything || held[i].due_ms <= now) {
            nfq_set_verdict(queue, held[i].id, NF_ACCEPT, 0, NULL);
            held[i] = held[--n_held];
        } else {
            if (next < 0 || held[i].due_ms < next) {
                next = held[i].due_ms;
            }
            i++;
        }
    }
    return next < 0 ? -1 : (int) (next - now);
}

static void on_signal(int sig) {
    (void) sig;
    stopping = 1;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s QUEUE DELAY_MS JITTER_MS MAX_SECONDS\n", argv[0]);
        return 2;
    }
    int queue_num = atoi(argv[1]);
    delay_ms = atol(argv[2]);
    jitter_ms = atol(argv[3]);
    long long until = now_ms() + atol(argv[4]) * 1000LL;
    srandom((unsigned) time(NULL) ^ (unsigned) queue_num);
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);

    struct nfq_handle *handle = nfq_open();
    if (handle == NULL) {
        perror("nfq_open");
        return 1;
    }
    struct nfq_q_handle *queue = nfq_create_queue(handle, (uint16_t) queue_num, &on_packet, NULL);
    if (queue == NULL) {
        perror("nfq_create_queue");
        return 1;
    }
    if (nfq_set_mode(queue, NFQNL_COPY_META, 0) < 0) {
        perror("nfq_set_mode");
        return 1;
    }
    nfq_set_queue_maxlen(queue, MAX_HELD);
    int fd = nfq_fd(handle);
    char buf[65536] __attribute__((aligned));
    while (!stopping && now_ms() < until) {
        int wait = release(queue, 0);
        long long left = until - now_ms();
        if (wait < 0 || wait > left) {
            wait = (int) (left > 0 ? left : 0);
        }
        if (wait > 200) {
            wait = 200; /* notice a signal or the end soon */
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int ready = poll(&p, 1, wait);
        if (ready > 0) {
            ssize_t got = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
            if (got > 0) {
                nfq_handle_packet(handle, buf, (int) got);
            } else if (got < 0 && errno != EAGAIN && errno != ENOBUFS && errno != EINTR) {
                perror("recv");
                break;
            }
        }
    }
    release(queue, 1);
    nfq_destroy_queue(queue);
    nfq_close(handle);
    return 0;
}
