/* A minimal one-round-trip RCON client, the floor for benchmarks (written for rconsole's
 * benchmarks, not a product): log in, then for each command send one packet and read one
 * packet back, as mcrcon does; no reassembly, no end-of-output detection, no timeouts.
 *
 *   onertt HOST PORT PASSWORD oneshot CMD   print the answer of one command
 *   onertt HOST PORT PASSWORD stream N      run `echo i` for i < N in one session
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int fd;
static unsigned char buf[16 * 1024 * 1024];

static void die(const char *what) {
    perror(what);
    exit(1);
}

static void send_packet(int32_t id, int32_t type, const char *body) {
    unsigned char out[1500];
    int32_t len = (int32_t)strlen(body);
    int32_t size = len + 10;
    if (len > 1446) die("command too long");
    memcpy(out, &size, 4);
    memcpy(out + 4, &id, 4);
    memcpy(out + 8, &type, 4);
    memcpy(out + 12, body, (size_t)len);
    out[12 + len] = 0;
    out[13 + len] = 0;
    if (write(fd, out, (size_t)size + 4) != size + 4) die("write");
}

static void read_full(unsigned char *p, size_t n) {
    while (n > 0) {
        ssize_t got = read(fd, p, n);
        if (got <= 0) die("read");
        p += got;
        n -= (size_t)got;
    }
}

/* Reads one packet; returns its body length (the body is in buf + 8). */
static int32_t read_packet(int32_t *id) {
    int32_t size;
    read_full((unsigned char *)&size, 4);
    if (size < 10 || (size_t)size > sizeof buf) die("size");
    read_full(buf, (size_t)size);
    memcpy(id, buf, 4);
    return size - 10;
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: onertt HOST PORT PASSWORD oneshot CMD | stream N\n");
        return 2;
    }
    struct addrinfo hints = {0}, *res;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(argv[1], argv[2], &hints, &res) != 0) die("resolve");
    fd = socket(res->ai_family, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, res->ai_addr, res->ai_addrlen) != 0) die("connect");
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    int32_t id;
    send_packet(1, 3, argv[3]);
    read_packet(&id);
    if (id == -1) die("login");
    if (strcmp(argv[4], "oneshot") == 0) {
        send_packet(2, 2, argv[5]);
        int32_t n = read_packet(&id);
        fwrite(buf + 8, 1, (size_t)n, stdout);
        putchar('\n');
    } else {
        long count = atol(argv[5]);
        char cmd[64];
        for (long i = 0; i < count; i++) {
            snprintf(cmd, sizeof cmd, "echo line %ld", i);
            send_packet((int32_t)(i + 2), 2, cmd);
            int32_t n = read_packet(&id);
            fwrite(buf + 8, 1, (size_t)n, stdout);
            putchar('\n');
        }
    }
    close(fd);
    return 0;
}
