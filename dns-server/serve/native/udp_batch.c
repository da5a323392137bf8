// Batched UDP for the dns-server (Linux): reads a socket that Node's dgram
// bound with recvmmsg into a ring of slots, makes one call into JS per batch,
// and sends the answers JS wrote into the output ring with one sendmmsg.
// Why: ADR 0102 (Node's per-datagram recvmsg/sendmsg is the server's floor);
// what was built and measured: ADR 0105.
//
// The memory is JS's: the input ring, the output ring and the lengths are
// Buffers/typed arrays made by the caller (their backing stores never move),
// held here by references until close. Nothing is allocated per datagram.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <unistd.h>
#include <node_api.h>
#include <uv.h>

// Batches read per readiness event before going back to the event loop, so
// that TCP, timers and IPC get their turn under a flood (level-triggered poll:
// what is left is read on the next turn).
#define MAX_ROUNDS 16
// How long one batch may wait for room in the send buffer (EAGAIN/ENOBUFS)
// before the rest of it is dropped: DNS over UDP is lossy, clients retry, and
// the loop must not stall on a full buffer.
#define SEND_WAIT_MS 5

// Counters shared with JS through a Float64Array (indices in native-udp.ts).
enum { ST_BATCHES, ST_RECEIVED, ST_SENT, ST_SEND_ERRORS, ST_SEND_DROPPED, ST_LAST_SEND_ERRNO,
       ST_RECV_ERRORS, ST_LAST_RECV_ERRNO, ST_TRUNCATED, ST_COUNT };

typedef struct {
  napi_env env;
  uv_poll_t poll;
  int fd;  // our dup of the dgram socket's descriptor
  int slots;
  size_t in_slot, out_slot;
  unsigned char *in, *out;
  int32_t *lengths;  // [0, slots): received lengths; [slots, 2 slots): answer lengths (0: none)
  double *stats;
  struct sockaddr_storage *peers;
  struct mmsghdr *rmsgs, *smsgs;
  struct iovec *riov, *siov;
  napi_ref refs[5];  // in, out, lengths, stats, on_batch
  napi_ref resource;
  napi_async_context async;
  int closing, in_batch;
} ring_t;

#define CHECK(call)                                                             \
  do {                                                                          \
    napi_status s_ = (call);                                                    \
    if (s_ != napi_ok) {                                                        \
      const napi_extended_error_info* info_ = NULL;                             \
      napi_get_last_error_info(env, &info_);                                    \
      bool pending_ = false;                                                    \
      napi_is_exception_pending(env, &pending_);                                \
      if (!pending_)                                                            \
        napi_throw_error(env, NULL, info_ && info_->error_message               \
                                        ? info_->error_message : #call " failed"); \
      return NULL;                                                              \
    }                                                                           \
  } while (0)

static napi_value throw_errno(napi_env env, const char* what, int err) {
  char msg[256];
  snprintf(msg, sizeof msg, "%s: %s", what, strerror(err));
  napi_throw_error(env, NULL, msg);
  return NULL;
}

static int recv_batch(ring_t* r) {
  for (int i = 0; i < r->slots; i++) {
    r->rmsgs[i].msg_hdr.msg_namelen = sizeof(struct sockaddr_storage);
    r->rmsgs[i].msg_hdr.msg_flags = 0;
  }
  for (;;) {
    int n = recvmmsg(r->fd, r->rmsgs, r->slots, MSG_DONTWAIT, NULL);
    if (n >= 0) return n;
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      r->stats[ST_RECV_ERRORS]++;
      r->stats[ST_LAST_RECV_ERRNO] = errno;
    }
    return 0;
  }
}

// Sends every answer of the batch at most once: on an error for one datagram
// (EMSGSIZE, an unreachable peer) that one is skipped and counted; when the
// send buffer stays full the rest is dropped and counted.
static void send_batch(ring_t* r, int n) {
  int count = 0;
  for (int i = 0; i < n; i++) {
    int32_t len = r->lengths[r->slots + i];
    if (len <= 0) continue;
    if ((size_t)len > r->out_slot) len = (int32_t)r->out_slot;  // JS wrote past its slot: never read past it
    struct mmsghdr* m = &r->smsgs[count];
    r->siov[count].iov_base = r->out + (size_t)i * r->out_slot;
    r->siov[count].iov_len = (size_t)len;
    m->msg_hdr.msg_iov = &r->siov[count];
    m->msg_hdr.msg_iovlen = 1;
    m->msg_hdr.msg_name = &r->peers[i];
    m->msg_hdr.msg_namelen = r->rmsgs[i].msg_hdr.msg_namelen;
    m->msg_hdr.msg_control = NULL;
    m->msg_hdr.msg_controllen = 0;
    m->msg_hdr.msg_flags = 0;
    count++;
  }
  int waited = 0;
  for (int at = 0; at < count;) {
    int sent = sendmmsg(r->fd, r->smsgs + at, count - at, MSG_DONTWAIT);
    if (sent > 0) {
      at += sent;
      r->stats[ST_SENT] += sent;
      continue;
    }
    if (sent < 0 && errno == EINTR) continue;
    int err = sent < 0 ? errno : EIO;
    if ((err == EAGAIN || err == EWOULDBLOCK || err == ENOBUFS) && !waited) {
      // Once per batch, like NSD: wait briefly for room, then try again.
      struct pollfd p = {.fd = r->fd, .events = POLLOUT};
      waited = 1;
      if (poll(&p, 1, SEND_WAIT_MS) > 0) continue;
    }
    r->stats[ST_LAST_SEND_ERRNO] = err;
    if (err == EAGAIN || err == EWOULDBLOCK || err == ENOBUFS) {
      r->stats[ST_SEND_DROPPED] += count - at;
      return;
    }
    r->stats[ST_SEND_ERRORS]++;
    at++;  // this datagram cannot be sent; the others still go
  }
}

static void free_ring(ring_t* r) {
  for (int i = 0; i < 5; i++)
    if (r->refs[i]) napi_delete_reference(r->env, r->refs[i]);
  if (r->async) napi_async_destroy(r->env, r->async);
  if (r->resource) napi_delete_reference(r->env, r->resource);
  free(r->peers);
  free(r->rmsgs);
  free(r->smsgs);
  free(r->riov);
  free(r->siov);
  free(r);
}

static void on_closed(uv_handle_t* h) {
  ring_t* r = h->data;
  close(r->fd);
  free_ring(r);
}

static void on_readable(uv_poll_t* h, int status, int events) {
  (void)events;
  ring_t* r = h->data;
  napi_env env = r->env;
  if (status < 0) {
    r->stats[ST_RECV_ERRORS]++;
    r->stats[ST_LAST_RECV_ERRNO] = -status;
    return;
  }
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return;
  napi_value resource, fn, arg, result;
  napi_get_reference_value(env, r->resource, &resource);
  napi_get_reference_value(env, r->refs[4], &fn);
  r->in_batch = 1;
  for (int round = 0; round < MAX_ROUNDS && !r->closing; round++) {
    int n = recv_batch(r);
    if (n == 0) break;
    for (int i = 0; i < n; i++) {
      // Cannot happen with slots of 64 KiB (larger than any UDP payload); counted, never half-read.
      int truncated = (r->rmsgs[i].msg_hdr.msg_flags & MSG_TRUNC) != 0;
      if (truncated) r->stats[ST_TRUNCATED]++;
      r->lengths[i] = truncated ? 0 : (int32_t)r->rmsgs[i].msg_len;
      r->lengths[r->slots + i] = 0;
    }
    r->stats[ST_BATCHES]++;
    r->stats[ST_RECEIVED] += n;
    napi_create_int32(env, n, &arg);
    napi_status s = napi_make_callback(env, r->async, resource, fn, 1, &arg, &result);
    if (s != napi_ok) {
      // The batch handler threw (it catches per query, so this is a bug): the answers
      // written so far are sent, and the exception goes to the process as uncaught.
      send_batch(r, n);
      bool pending = false;
      napi_is_exception_pending(env, &pending);
      if (pending) {
        napi_value err;
        napi_get_and_clear_last_exception(env, &err);
        napi_fatal_exception(env, err);
      }
      break;
    }
    send_batch(r, n);
    if (n < r->slots) break;  // drained
  }
  r->in_batch = 0;
  napi_close_handle_scope(env, scope);
  if (r->closing && !uv_is_closing((uv_handle_t*)&r->poll)) uv_close((uv_handle_t*)&r->poll, on_closed);
}

static napi_value buffer_data(napi_env env, napi_value v, void** data, size_t* len) {
  bool is_buffer = false, is_typed = false;
  CHECK(napi_is_buffer(env, v, &is_buffer));
  if (is_buffer) {
    CHECK(napi_get_buffer_info(env, v, data, len));
    return v;
  }
  CHECK(napi_is_typedarray(env, v, &is_typed));
  if (!is_typed) {
    napi_throw_type_error(env, NULL, "expected a Buffer or a typed array");
    return NULL;
  }
  napi_typedarray_type type;
  size_t length, offset;
  napi_value ab;
  CHECK(napi_get_typedarray_info(env, v, &type, &length, data, &ab, &offset));
  *len = length * (type == napi_float64_array ? 8 : 4);
  return v;
}

// attach(fd, slots, inRing, inSlot, outRing, outSlot, lengths: Int32Array, stats: Float64Array,
//        onBatch(n)) → handle. fd is dgram's descriptor; it is duplicated, dgram keeps its own.
static napi_value attach(napi_env env, napi_callback_info info) {
  size_t argc = 9;
  napi_value argv[9];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc != 9) {
    napi_throw_type_error(env, NULL, "attach: 9 arguments");
    return NULL;
  }
  int32_t fd, slots, in_slot, out_slot;
  CHECK(napi_get_value_int32(env, argv[0], &fd));
  CHECK(napi_get_value_int32(env, argv[1], &slots));
  CHECK(napi_get_value_int32(env, argv[3], &in_slot));
  CHECK(napi_get_value_int32(env, argv[5], &out_slot));
  if (slots < 1 || slots > 1024 || in_slot < 12 || out_slot < 12) {
    napi_throw_range_error(env, NULL, "attach: slots 1–1024, slot sizes at least 12");
    return NULL;
  }
  void *in, *out, *lengths, *stats;
  size_t in_len, out_len, lengths_len, stats_len;
  if (!buffer_data(env, argv[2], &in, &in_len) || !buffer_data(env, argv[4], &out, &out_len) ||
      !buffer_data(env, argv[6], &lengths, &lengths_len) || !buffer_data(env, argv[7], &stats, &stats_len))
    return NULL;
  if (in_len < (size_t)slots * in_slot || out_len < (size_t)slots * out_slot ||
      lengths_len < (size_t)slots * 2 * sizeof(int32_t) || stats_len < ST_COUNT * sizeof(double)) {
    napi_throw_range_error(env, NULL, "attach: a ring or an array is smaller than the slots need");
    return NULL;
  }
  napi_valuetype t;
  CHECK(napi_typeof(env, argv[8], &t));
  if (t != napi_function) {
    napi_throw_type_error(env, NULL, "attach: onBatch is not a function");
    return NULL;
  }
  int type = 0;
  socklen_t tl = sizeof type;
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) != 0) return throw_errno(env, "attach: getsockopt", errno);
  if (type != SOCK_DGRAM) {
    napi_throw_error(env, NULL, "attach: not a datagram socket");
    return NULL;
  }
  int mine = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (mine < 0) return throw_errno(env, "attach: dup", errno);

  ring_t* r = calloc(1, sizeof *r);
  if (!r) {
    close(mine);
    return throw_errno(env, "attach", ENOMEM);
  }
  r->env = env;
  r->fd = mine;
  r->slots = slots;
  r->in_slot = (size_t)in_slot;
  r->out_slot = (size_t)out_slot;
  r->in = in;
  r->out = out;
  r->lengths = lengths;
  r->stats = stats;
  r->peers = calloc((size_t)slots, sizeof *r->peers);
  r->rmsgs = calloc((size_t)slots, sizeof *r->rmsgs);
  r->smsgs = calloc((size_t)slots, sizeof *r->smsgs);
  r->riov = calloc((size_t)slots, sizeof *r->riov);
  r->siov = calloc((size_t)slots, sizeof *r->siov);
  if (!r->peers || !r->rmsgs || !r->smsgs || !r->riov || !r->siov) {
    close(mine);
    free_ring(r);
    return throw_errno(env, "attach", ENOMEM);
  }
  for (int i = 0; i < slots; i++) {
    r->riov[i].iov_base = r->in + (size_t)i * r->in_slot;
    r->riov[i].iov_len = r->in_slot;
    r->rmsgs[i].msg_hdr.msg_name = &r->peers[i];
    r->rmsgs[i].msg_hdr.msg_iov = &r->riov[i];
    r->rmsgs[i].msg_hdr.msg_iovlen = 1;
  }
  const int holds[5] = {2, 4, 6, 7, 8};
  for (int i = 0; i < 5; i++) napi_create_reference(env, argv[holds[i]], 1, &r->refs[i]);
  napi_value resource, name;
  napi_create_object(env, &resource);
  napi_create_reference(env, resource, 1, &r->resource);
  napi_create_string_utf8(env, "dns-server:udp-batch", NAPI_AUTO_LENGTH, &name);
  napi_async_init(env, resource, name, &r->async);

  uv_loop_t* loop;
  if (napi_get_uv_event_loop(env, &loop) != napi_ok || uv_poll_init(loop, &r->poll, mine) != 0) {
    close(mine);
    free_ring(r);
    napi_throw_error(env, NULL, "attach: cannot poll the socket");
    return NULL;
  }
  r->poll.data = r;
  int rc = uv_poll_start(&r->poll, UV_READABLE, on_readable);
  if (rc != 0) {
    r->closing = 1;
    uv_close((uv_handle_t*)&r->poll, on_closed);
    napi_throw_error(env, NULL, uv_strerror(rc));
    return NULL;
  }
  napi_value handle;
  CHECK(napi_create_external(env, r, NULL, NULL, &handle));
  return handle;
}

static ring_t* ring_of(napi_env env, napi_value v) {
  void* p = NULL;
  if (napi_get_value_external(env, v, &p) != napi_ok || !p) {
    napi_throw_type_error(env, NULL, "not a handle from attach");
    return NULL;
  }
  return p;
}

// close(handle): stops reading; a batch in progress (close called from onBatch) is still sent.
// The handle must not be used afterwards.
static napi_value close_ring(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  ring_t* r = ring_of(env, argv[0]);
  if (!r || r->closing) return NULL;
  r->closing = 1;
  uv_poll_stop(&r->poll);
  if (!r->in_batch) uv_close((uv_handle_t*)&r->poll, on_closed);
  return NULL;
}

// peer(handle, i) → the address datagram i of the current batch came from (logs only).
static napi_value peer(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  ring_t* r = ring_of(env, argv[0]);
  int32_t i;
  if (!r) return NULL;
  CHECK(napi_get_value_int32(env, argv[1], &i));
  if (i < 0 || i >= r->slots) {
    napi_throw_range_error(env, NULL, "peer: no such slot");
    return NULL;
  }
  char text[INET6_ADDRSTRLEN] = "";
  struct sockaddr_storage* a = &r->peers[i];
  if (a->ss_family == AF_INET)
    inet_ntop(AF_INET, &((struct sockaddr_in*)a)->sin_addr, text, sizeof text);
  else if (a->ss_family == AF_INET6)
    inet_ntop(AF_INET6, &((struct sockaddr_in6*)a)->sin6_addr, text, sizeof text);
  napi_value s;
  CHECK(napi_create_string_utf8(env, text, NAPI_AUTO_LENGTH, &s));
  return s;
}

// hugePages(u8): advises the 2 MiB-aligned part of a Uint8Array's memory for
// transparent huge pages (MADV_HUGEPAGE), for the answer arena
// (wire/arena-memory.ts). Only pages not yet touched are then faulted in whole
// (those already there wait for khugepaged), so the caller advises fresh memory
// and writes it after. Returns the offset in the array at which that part
// begins; -1 when there is none; -1 - errno when madvise refuses.
#define HUGE_PAGE (2u << 20)
static napi_value huge_pages(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  napi_typedarray_type type;
  size_t length;
  void* data;
  CHECK(napi_get_typedarray_info(env, argv[0], &type, &length, &data, NULL, NULL));
  uintptr_t start = (uintptr_t)data;
  uintptr_t aligned = (start + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
  uintptr_t end = (start + length) & ~(uintptr_t)(HUGE_PAGE - 1);
  int64_t result = -1;
  if (type == napi_uint8_array && end > aligned)
    result = madvise((void*)aligned, end - aligned, MADV_HUGEPAGE) == 0 ? (int64_t)(aligned - start)
                                                                         : -1 - (int64_t)errno;
  napi_value out;
  CHECK(napi_create_int64(env, result, &out));
  return out;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
      {"attach", NULL, attach, NULL, NULL, NULL, napi_enumerable, NULL},
      {"close", NULL, close_ring, NULL, NULL, NULL, napi_enumerable, NULL},
      {"peer", NULL, peer, NULL, NULL, NULL, napi_enumerable, NULL},
      {"hugePages", NULL, huge_pages, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  CHECK(napi_define_properties(env, exports, sizeof props / sizeof props[0], props));
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
