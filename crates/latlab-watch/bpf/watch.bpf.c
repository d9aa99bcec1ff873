// SPDX-License-Identifier: MIT OR Apache-2.0
//
// latlab watch: the kernel side (see docs/watch.md).
//
// For every wake-up of a watched task it measures, in the kernel:
// - a timer-driven wake-up (the task woken inside an hrtimer callback of a
//   CLOCK_MONOTONIC timer): the timer-interrupt latency (soft expiry to the
//   timer interrupt's clock read, the `now` of hrtimer_expire_entry), the
//   thread latency (soft expiry to the task running) and their difference,
//   the preemption latency (that clock read to the task running);
// - any other wake-up: sched_waking to the task running;
// into histograms with latlab-measure's bucket scheme. Every CPU keeps a
// short ring of the events explain needs (switches, wake-ups, interrupts,
// softirqs, hrtimer callbacks); only for a wake-up later than the threshold
// (and one in `baseline_every` normal ones, explain's baseline) the head of
// the wake-up and the rings of the task's CPU and of the timer's CPU go to
// user space through a ring buffer, at the CPU's next switch (the task
// leaving it): the copy never delays the wake-up it describes.
//
// Built with clang -target bpf (`make bpf`); CO-RE without vmlinux.h: the
// structs below name only the fields read, and the loader (aya) relocates
// them against the running kernel's BTF. The record layouts are mirrored in
// crates/latlab-watch/src/records.rs. Kernel memory the tracepoints do not
// hand over is read with plain loads through the kfunc bpf_rdonly_cast(),
// or by twins with bpf_probe_read_kernel() on kernels without it (see
// rdonly_cast below).

typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;
typedef int __s32;
typedef long long __s64;
typedef __u8 u8;
typedef __u32 u32;
typedef __u64 u64;
typedef __s64 s64;
typedef __s32 s32;
typedef _Bool bool;

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "Dual MIT/GPL";

struct task_struct {
	int pid;
	int prio;
	char comm[16];
} __attribute__((preserve_access_index));

struct hrtimer;

struct hrtimer_clock_base {
	int clockid;
	struct hrtimer *running; /* the timer whose callback runs now, or NULL */
} __attribute__((preserve_access_index));

struct hrtimer {
	s64 _softexpires;
	void *function; /* its callback (a function pointer; logged, never called) */
	struct hrtimer_clock_base *base;
	u8 is_soft; /* its callback runs in the HRTIMER softirq */
} __attribute__((preserve_access_index));

/* A kernel struct whose first field is a ktime_t: the type the interrupt's
 * clock read (hrtimer_expire_entry's `ktime_t *now`) is read as (see
 * read_ktime). Only `device` is read. */
struct system_device_crosststamp {
	s64 device;
} __attribute__((preserve_access_index));

struct irqaction;

/* ---- kernel memory on the wake-up's path ----
 * Two values the path needs are behind pointers the verifier lets a
 * program hold but not follow: the interrupt's clock read (the `ktime_t
 * *now` of hrtimer_expire_entry) and the running callback of a clock base
 * an earlier program kept. bpf_probe_read_kernel() reads them with a
 * helper call: 0.1-0.2 µs each, cold, on this project's VM. Where the
 * kernel has the kfunc bpf_rdonly_cast() (6.2+), the programs built with
 * `cast` read them with plain loads instead (the JIT guards each with an
 * exception-table entry: a fault reads 0), a few ns. The loader attaches
 * on_hrtimer_entry and on_waking where the kernel takes them, their
 * *_probe twins elsewhere.
 *
 * aya 0.13 resolves no kfunc (extern __ksym) calls, so the call is written
 * as a helper call to RDONLY_CAST_PLACEHOLDER, which no kernel has; the
 * loader rewrites each such call into a call of the kfunc, with its id in
 * the running kernel's BTF (crates/latlab-watch/src/loader/kfunc.rs). The
 * type id argument is a CO-RE relocation, resolved by aya. */
#define RDONLY_CAST_PLACEHOLDER 0x7ca57ca5
#define STRINGIFY(x) #x
#define STR(x) STRINGIFY(x)

/* bpf_rdonly_cast(obj, btf_id): obj as a read-only pointer to the kernel
 * type btf_id. */
static __always_inline void *rdonly_cast(const void *obj, u32 btf_id)
{
	void *out;
	asm volatile("r1 = %[obj]\n\t"
		     "r2 = %[id]\n\t"
		     "call " STR(RDONLY_CAST_PLACEHOLDER) "\n\t"
		     "%[out] = r0"
		     : [out] "=r"(out)
		     : [obj] "r"(obj), [id] "r"(btf_id)
		     : "r0", "r1", "r2", "r3", "r4", "r5");
	return out;
}

/* The ktime_t at kernel address p; 0 when unreadable. */
static __always_inline s64 read_ktime(const s64 *p, bool cast)
{
	if (cast) {
		struct system_device_crosststamp *t = rdonly_cast(
			p, bpf_core_type_id_kernel(struct system_device_crosststamp));
		return t->device;
	}
	s64 v = 0;
	if (bpf_probe_read_kernel(&v, sizeof(v), p))
		return 0;
	return v;
}

/* The timer whose callback the clock base at kernel address `base` runs
 * now (its `running`), as an address; 0 for none or when unreadable. */
static __always_inline u64 running_timer(u64 base, bool cast)
{
	if (cast) {
		struct hrtimer_clock_base *b =
			rdonly_cast((void *)base, bpf_core_type_id_kernel(struct hrtimer_clock_base));
		return (u64)b->running;
	}
	u64 running = 0;
	if (bpf_core_read(&running, sizeof(running),
			  &((struct hrtimer_clock_base *)base)->running))
		return 0;
	return running;
}

/* ---- settings, written by user space before the load (.rodata) ---- */
/* A wake-up later than this (ns) sends its window to user space. */
const volatile u64 threshold_ns = 100000;
/* Follow new threads and processes of watched tasks. */
const volatile bool follow_forks = 0;
/* At most this many windows per second and CPU (the rest are counted). */
const volatile u32 max_windows_per_sec = 50;
/* One normal wake-up in this many (per CPU) also sends its window: the
 * baseline explain compares late windows with. 0: none. */
const volatile u32 baseline_every = 1000;
/* Measure only the wake-ups of a thread at a real-time priority (kernel
 * prio below 100: SCHED_FIFO, SCHED_RR, SCHED_DEADLINE) at its switch in:
 * `latlab watch --rt` with a selection, whose other threads are watched
 * only so that their new threads are followed. */
const volatile bool rt_only = 0;

/* Whether any window can ever be sent: with no threshold (its maximum) and
 * no baseline (latlab run --split: histograms only), the event rings are
 * never read, so nothing is logged into them. A constant once loaded: the
 * verifier drops the logging code. */
static __always_inline bool rings_wanted(void)
{
	return threshold_ns != ~0ULL || baseline_every != 0;
}

#define CLOCK_MONOTONIC 1

/* ---- histograms: latlab-measure's log-linear buckets ---- */
#define PRECISION_BITS 10
#define EXACT (1ULL << PRECISION_BITS)
#define HALF (EXACT / 2)

/* KIND_PREEMPT: the timer interrupt to the task running (thread minus irq,
 * sample by sample: MontaVista's preemption latency). */
enum kind { KIND_THREAD = 0, KIND_IRQ = 1, KIND_WAKEUP = 2, KIND_PREEMPT = 3 };

struct hist_key {
	u32 pid;
	u32 kind_bucket; /* kind << 24 | bucket */
};

/* One map for every task, kind and bucket: only the buckets in use take
 * memory. Not per-CPU (that would multiply its size by the CPUs): two CPUs
 * counting the same bucket at once is rare, and the add is atomic. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct hist_key);
	__type(value, u64);
} hist SEC(".maps");

/* ---- counters (per CPU): see enum counter ---- */
enum counter {
	CNT_LOST = 0,      /* windows (or their rings) the ring buffer had no room for */
	CNT_THROTTLED = 1, /* late windows over max_windows_per_sec */
	CNT_HIST_FULL = 2, /* samples the full hist map could not count */
	CNT_LATE = 3,      /* wake-ups over the threshold */
	CNT_SHARED = 4,    /* wake-ups lost to another thread's in a shared pending slot */
	CNT_WATCH_FULL = 5, /* new threads of watched tasks not watched: the watched map was full */
	CNT_MAX = 6,
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CNT_MAX);
	__type(key, u32);
	__type(value, u64);
} counters SEC(".maps");

static __always_inline void count(u32 which)
{
	u64 *n = bpf_map_lookup_elem(&counters, &which);
	if (n)
		*n += 1;
}

/* Index of the highest set bit of v (v > 0), without a clz instruction. */
static __always_inline u32 log2_u64(u64 v)
{
	u32 r = 0;
	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) { r += 1; }
	return r;
}

static __always_inline u32 bucket_of(u64 v)
{
	if (v < EXACT)
		return (u32)v;
	u32 exponent = log2_u64(v);
	u32 shift = exponent - PRECISION_BITS + 1;
	u64 mantissa = v >> shift;
	return (u32)(EXACT + (u64)(exponent - PRECISION_BITS) * HALF + (mantissa - HALF));
}

static __always_inline void hist_add(u32 pid, u32 kind, u64 ns)
{
	struct hist_key key = { .pid = pid, .kind_bucket = kind << 24 | bucket_of(ns) };
	u64 one = 1, *n = bpf_map_lookup_elem(&hist, &key);
	if (n) {
		__sync_fetch_and_add(n, 1);
		return;
	}
	/* Another CPU may have made the key meanwhile: then add to it. */
	if (bpf_map_update_elem(&hist, &key, &one, BPF_NOEXIST)) {
		n = bpf_map_lookup_elem(&hist, &key);
		if (n)
			__sync_fetch_and_add(n, 1);
		else
			count(CNT_HIST_FULL);
	}
}

/* ---- the watched tasks (thread ids), kept by user space ---- */
/* The list, for user space to read back (with those on_fork added). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, u32);
	__type(value, u8);
} watched SEC(".maps");

/* The same set as one bit per thread id, for the test every switch and
 * wake-up of every task makes: an array lookup the kernel inlines into two
 * loads, where the hash above would cost a helper call and a hash. 2^22
 * bits cover every thread id (the kernel's PID_MAX_LIMIT). */
#define WATCHED_WORDS (1 << 16)
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, WATCHED_WORDS);
	__type(key, u32);
	__type(value, u64);
} watched_bits SEC(".maps");

static __always_inline bool is_watched(u32 pid)
{
	u32 word = (pid >> 6) & (WATCHED_WORDS - 1);
	u64 *w = bpf_map_lookup_elem(&watched_bits, &word);
	return pid && w && (*w >> (pid & 63)) & 1;
}

/* ---- a wake-up on its way ----
 * Only a wake-up from sleep is measured: one that finds its thread still
 * on the run queue (preempted, or still running: woken from another CPU as
 * it was going to sleep) ends no sleep and, for a preempted thread, only
 * changes its state. A preempted thread is marked in its slot until it runs
 * again and its wake-ups are not kept; a kept wake-up of a running thread
 * is dropped when the thread is preempted (its next switch in would be the
 * end of that preemption) and replaced by its next real one otherwise.
 * One slot per thread id modulo PENDING_SLOTS, naming its thread: an array
 * the kernel inlines into a few loads and stores, where a hash would cost a
 * helper call, a hash and a lock on the path of the very wake-up being
 * measured, and another to delete the entry. Two watched threads whose ids
 * are equal modulo 65 536, woken at once, share a slot: the first one's
 * wake-up is lost, and counted (CNT_SHARED). */
#define PENDING_SLOTS (1 << 16)
struct pending {
	u32 pid;     /* the thread woken; 0: the slot is free */
	u32 timer_cpu;
	u64 expires; /* soft expiry of the timer (0: not timer-driven) */
	u64 irq_at;  /* the timer interrupt read the time for its callback (its `now`) */
	u64 woken_at;
	u32 soft;    /* the callback ran in the HRTIMER softirq */
	u32 preempted; /* this thread left its CPU runnable and has not run since */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PENDING_SLOTS);
	__type(key, u32);
	__type(value, struct pending);
} pending SEC(".maps");

static __always_inline struct pending *pending_slot(u32 pid)
{
	u32 slot = pid & (PENDING_SLOTS - 1);
	return bpf_map_lookup_elem(&pending, &slot);
}

/* The head of a window: the wake-up it is about. */
struct window_head {
	u32 pid;
	u32 cpu;
	u32 timer_cpu;
	s32 prio;
	u64 expires;
	u64 irq_at;
	u64 woken_at;
	u64 switch_at;
	u32 late;
	u32 soft;
	char comm[16];
};

/* ---- per-CPU state ---- */
/* The last hrtimer callback that began on a CPU, in hard interrupt context
 * (0) or in the HRTIMER softirq (1). Whether it still runs is its clock
 * base's `running` (the kernel sets it for the callback's duration): no
 * program on hrtimer_expire_exit, one fewer on every timer wake-up's path. */
struct callback {
	u64 timer;   /* the struct hrtimer; 0: none yet */
	u64 base;    /* its struct hrtimer_clock_base */
	u64 soft;    /* its soft expiry; 0: not CLOCK_MONOTONIC */
	u64 entered; /* the timer interrupt's clock read for it (its `now`) */
};

struct cpu_state {
	struct callback callback[2]; /* hard, soft */
	u32 measured;      /* wake-ups measured (for the baseline) */
	u64 second;        /* the second windows are being counted in */
	u32 windows;       /* windows sent in that second */
	u32 deferred;      /* a window waits in `window` for this CPU's next switch */
	/* The sample of the wake-up that just switched in, counted into the
	 * histograms at this CPU's next switch: the hash updates stay off the
	 * path of the wake-up they measure. */
	u32 sample_pid;    /* 0: none waits */
	u32 sample_timer;  /* timer-driven: thread, irq and preemption latency */
	u64 sample_lat;    /* thread latency, or wake-up latency */
	u64 sample_irq;
	u64 sample_preempt;
	/* The window of the wake-up that just switched in: sent at the next
	 * switch on this CPU (the task leaving it), so that copying the rings
	 * never delays the very wake-up being measured. */
	struct window_head window;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct cpu_state);
} cpu_state SEC(".maps");

static __always_inline struct cpu_state *this_cpu(void)
{
	u32 zero = 0;
	return bpf_map_lookup_elem(&cpu_state, &zero);
}

/* ---- per-CPU event ring ---- */
enum ev_type {
	EV_SWITCH = 1,        /* a: prev_pid, b: next_pid, c: next_prio, d: prev runnable; comm: next's */
	EV_WAKING = 2,        /* a: pid, b: target cpu, c: prio, d: a watched task woken by the
				 * hrtimer callback running (1: hard, 2: soft), else 0; comm: the woken task's */
	EV_IRQ_ENTRY = 3,     /* a: irq */
	EV_IRQ_EXIT = 4,      /* a: irq */
	EV_SOFTIRQ_ENTRY = 5, /* a: vec */
	EV_SOFTIRQ_EXIT = 6,  /* a: vec */
	EV_HRTIMER_ENTRY = 7, /* x: timer address, a: soft timer (callback in softirq), c: ns since the
			       * interrupt read the clock, b and d: the callback function's address
			       * (low and high 32 bits) */
	/* 8: hrtimer_expire_exit, which only the tracefs side logs */
	EV_VECTOR_ENTRY = 9,  /* a: vector number, b: enum vector */
	EV_VECTOR_EXIT = 10,  /* a: vector number, b: enum vector */
};

struct ev {
	u64 ts;
	u64 x;
	u32 type;
	s32 pid; /* the running task */
	s32 a;
	s32 b;
	s32 c;
	s32 d;
	char comm[16];
};

#define RING_SHIFT 9
#define RING (1 << RING_SHIFT)

struct ring {
	u64 head; /* events ever written; the newest is at (head - 1) % RING */
	/* The thread running on this CPU as its last sched_switch named it:
	 * every event's `pid` without a bpf_get_current_pid_tgid() call (a
	 * call and a return on each event, each return through the return
	 * thunk where the kernel mitigates SRSO or Retbleed). Until the CPU's
	 * first switch after the programs are loaded, the helper. (Programs
	 * detached and attached again, as bench/watch-interleaved.py --toggle
	 * does, find the thread of the last switch they saw until the next.) */
	u32 cur;
	u32 cur_known;
	struct ev ev[RING];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct ring);
} rings SEC(".maps");

/* Names the thread this CPU switches to as the one running (see struct
 * ring). */
static __always_inline void set_running(u32 pid)
{
	u32 zero = 0;
	struct ring *r = bpf_map_lookup_elem(&rings, &zero);
	if (r) {
		r->cur = pid;
		r->cur_known = 1;
	}
}

/* The thread running on this CPU (in an interrupt, the one interrupted). */
static __always_inline u32 running_pid(void)
{
	u32 zero = 0;
	struct ring *r = bpf_map_lookup_elem(&rings, &zero);
	if (r && r->cur_known)
		return r->cur;
	return (u32)bpf_get_current_pid_tgid();
}

static __always_inline struct ev *log_ev_at(u32 type, u64 ts, u64 x, s32 a, s32 b, s32 c,
					     s32 d)
{
	u32 zero = 0;
	struct ring *r = bpf_map_lookup_elem(&rings, &zero);
	if (!r)
		return 0;
	struct ev *e = &r->ev[r->head & (RING - 1)];
	e->ts = ts;
	e->x = x;
	e->type = type;
	e->pid = r->cur_known ? (s32)r->cur : (s32)bpf_get_current_pid_tgid();
	e->a = a;
	e->b = b;
	e->c = c;
	e->d = d;
	r->head += 1;
	return e;
}

/* Logs an event when the rings are wanted; its arguments (the clock read
 * among them) are not even evaluated otherwise. */
#define log_ev(...) (rings_wanted() ? log_ev_at(__VA_ARGS__) : (struct ev *)0)

/* The comm of a task the tracepoint hands over (a trusted pointer): two
 * direct loads, far cheaper than a bpf_probe_read_kernel_str() call on the
 * wake-up path. The kernel keeps comm NUL-terminated within its 16 bytes. */
static __always_inline void comm_into(char *dst, struct task_struct *t)
{
	u64 *d = (u64 *)dst;
	const u64 *c = (const u64 *)t->comm;
	d[0] = c[0];
	d[1] = c[1];
}

static __always_inline void copy_comm(struct ev *e, struct task_struct *t)
{
	if (e)
		comm_into(e->comm, t);
}

/* ---- windows to user space ---- */

/* One window: the head and the rings of the task's CPU and (when it is
 * another) of the timer's CPU, in one record so that windows of different
 * CPUs never interleave. */
struct window_record {
	struct window_head w;
	u32 rings;    /* rings that follow: 1 or 2 */
	u32 ring_cpu[2];
	u32 pad;
	struct ring ring[2];
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} windows SEC(".maps");

/* Whether this CPU may send another window this second. */
static __always_inline bool window_allowed(struct cpu_state *s, u64 now)
{
	u64 second = now / 1000000000ULL;
	if (s->second != second) {
		s->second = second;
		s->windows = 0;
	}
	if (s->windows >= max_windows_per_sec)
		return 0;
	s->windows += 1;
	return 1;
}

/* Keeps the window of the wake-up that is switching in now for the next
 * switch on this CPU. */
static __noinline void defer_window(struct cpu_state *s, struct task_struct *next,
				   struct pending *p, u64 now, bool late)
{
	struct window_head *w = &s->window;
	w->pid = next->pid;
	w->cpu = bpf_get_smp_processor_id();
	w->timer_cpu = p->timer_cpu;
	w->prio = next->prio;
	w->expires = p->expires;
	w->irq_at = p->irq_at;
	w->woken_at = p->woken_at;
	w->switch_at = now;
	w->late = late;
	w->soft = p->soft;
	comm_into(w->comm, next);
	s->deferred = 1;
}

/* Sends the deferred window: its head and the rings of the task's CPU and
 * (when it is another) of the timer's CPU. The rings run on past the
 * switch; user space cuts them at `switch_at`. */
static __noinline void emit_window(struct cpu_state *s)
{
	u32 zero = 0, cpu = s->window.cpu, timer_cpu = s->window.timer_cpu;
	s->deferred = 0;
	struct ring *task_ring = bpf_map_lookup_percpu_elem(&rings, &zero, cpu);
	struct ring *timer_ring = 0;
	if (!task_ring)
		return;
	if (timer_cpu != cpu) {
		timer_ring = bpf_map_lookup_percpu_elem(&rings, &zero, timer_cpu);
		if (!timer_ring)
			return;
	}
	struct window_record *rec = bpf_ringbuf_reserve(&windows, sizeof(*rec), 0);
	if (!rec) {
		count(CNT_LOST);
		return;
	}
	rec->w = s->window;
	rec->rings = timer_ring ? 2 : 1;
	rec->ring_cpu[0] = cpu;
	rec->ring_cpu[1] = timer_cpu;
	rec->pad = 0;
	bpf_probe_read_kernel(&rec->ring[0], sizeof(rec->ring[0]), task_ring);
	if (timer_ring)
		bpf_probe_read_kernel(&rec->ring[1], sizeof(rec->ring[1]), timer_ring);
	bpf_ringbuf_submit(rec, 0);
}

/* Counts the waiting sample into the histograms. */
static __noinline void count_sample(struct cpu_state *s)
{
	u32 pid = s->sample_pid;
	s->sample_pid = 0;
	if (s->sample_timer) {
		hist_add(pid, KIND_THREAD, s->sample_lat);
		hist_add(pid, KIND_IRQ, s->sample_irq);
		hist_add(pid, KIND_PREEMPT, s->sample_preempt);
	} else {
		hist_add(pid, KIND_WAKEUP, s->sample_lat);
	}
}

/* ---- the tracepoints ---- */

/* hrtimer_expire_entry: the callback's timer, soft expiry and the
 * interrupt's clock read, kept per CPU for the wake-up it may make. */
static __always_inline int hrtimer_entry(struct hrtimer *timer, s64 *now, bool cast)
{
	u64 ts = bpf_ktime_get_ns();
	struct cpu_state *s = this_cpu();
	struct hrtimer_clock_base *base = timer->base;
	u32 is_soft = timer->is_soft ? 1 : 0;
	u64 soft = 0;
	/* The time the interrupt read for its expired timers (the same number
	 * tracefs's hrtimer_expire_entry shows as `now`): for a CLOCK_MONOTONIC
	 * timer, monotonic time as bpf_ktime_get_ns; ts when unreadable. */
	s64 base_now = 0;
	u64 entered = ts;
	if (base->clockid == CLOCK_MONOTONIC) {
		soft = timer->_softexpires;
		base_now = read_ktime(now, cast);
		if (base_now > 0 && (u64)base_now <= ts)
			entered = base_now;
	}
	if (s) {
		struct callback *c = &s->callback[is_soft];
		c->timer = (u64)timer;
		c->base = (u64)base;
		c->soft = soft;
		c->entered = entered;
	}
	/* c: ns from the interrupt's clock read to here: the timer interrupt's
	 * entry, which user space draws from the callbacks (no programs on the
	 * LAPIC timer vector: two fewer on every wake-up's path). b, d: the
	 * callback function, which user space names from /proc/kallsyms (one
	 * more load of the timer the tracepoint hands over). */
	log_ev(EV_HRTIMER_ENTRY, ts, (u64)timer, is_soft, (s32)(u64)timer->function,
	       (s32)(ts - entered < 0x7fffffff ? ts - entered : 0x7fffffff),
	       (s32)((u64)timer->function >> 32));
	return 0;
}

SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(on_hrtimer_entry, struct hrtimer *timer, s64 *now)
{
	return hrtimer_entry(timer, now, 1);
}

/* The same for kernels without bpf_rdonly_cast(). */
SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(on_hrtimer_entry_probe, struct hrtimer *timer, s64 *now)
{
	return hrtimer_entry(timer, now, 0);
}

/* Whether this CPU's callback `c` runs now (and so does the waking it
 * makes): its clock base names it as running. One read, only for the
 * wake-ups of watched tasks. */
static __always_inline bool running_now(struct callback *c, u64 now, bool cast)
{
	if (!c->timer || !c->soft || c->soft > now)
		return 0;
	return running_timer(c->base, cast) == c->timer;
}

/* sched_waking: every wake-up logged; a watched thread's kept in its
 * pending slot, with its timer's expiry when a callback makes it. */
static __always_inline int waking(struct task_struct *p, bool cast)
{
	u64 now = bpf_ktime_get_ns();
	u32 pid = p->pid;
	struct ev *e = log_ev(EV_WAKING, now, 0, pid, -1, p->prio, 0);
	copy_comm(e, p);
	/* A task woken while it still runs (its timer fired between arming
	 * and schedule(), e.g. an expiry already past) never left the CPU:
	 * no wake-up to measure, and no switch would end one. */
	if (!is_watched(pid) || pid == running_pid())
		return 0;
	struct pending *w = pending_slot(pid);
	if (!w || w->preempted == pid)
		return 0;
	if (w->pid && w->pid != pid)
		count(CNT_SHARED);
	w->pid = pid;
	w->woken_at = now;
	w->timer_cpu = bpf_get_smp_processor_id();
	w->expires = 0;
	w->irq_at = 0;
	w->soft = 0;
	struct cpu_state *s = this_cpu();
	if (!s)
		return 0;
	/* A hard callback can interrupt a soft one, not the other way round:
	 * the hard one, when it runs, is the one waking. */
	for (u32 i = 0; i < 2; i++) {
		struct callback *c = &s->callback[i];
		if (running_now(c, now, cast)) {
			w->expires = c->soft;
			w->irq_at = c->entered;
			w->soft = i;
			if (e)
				e->d = i + 1;
			break;
		}
	}
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(on_waking, struct task_struct *p)
{
	return waking(p, 1);
}

/* The same for kernels without bpf_rdonly_cast(). */
SEC("tp_btf/sched_waking")
int BPF_PROG(on_waking_probe, struct task_struct *p)
{
	return waking(p, 0);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	u64 now = bpf_ktime_get_ns();
	u32 prev_pid = prev->pid, next_pid = next->pid;
	struct cpu_state *s = this_cpu();
	if (s && s->sample_pid)
		count_sample(s);
	if (s && s->deferred)
		emit_window(s);
	bool prev_runnable = preempt || prev_state == 0;
	copy_comm(log_ev(EV_SWITCH, now, 0, prev_pid, next_pid, next->prio, prev_runnable),
		  next);
	if (rings_wanted())
		set_running(next_pid);
	/* A watched thread leaving its CPU runnable (preempted): a wake-up its
	 * slot names found it running and ends no sleep; the end of this
	 * preemption must not be measured as that wake-up's latency. */
	if (prev_runnable && is_watched(prev_pid)) {
		struct pending *out = pending_slot(prev_pid);
		if (out) {
			if (out->pid == prev_pid)
				out->pid = 0;
			out->preempted = prev_pid;
		}
	}
	if (!is_watched(next_pid))
		return 0;
	struct pending *slot = pending_slot(next_pid);
	if (!slot)
		return 0;
	if (slot->preempted == next_pid)
		slot->preempted = 0;
	if (slot->pid != next_pid)
		return 0;
	/* Read out, and the slot free again. */
	struct pending w = *slot;
	slot->pid = 0;
	struct pending *p = &w;
	if (rt_only && next->prio >= 100)
		return 0;
	u64 start = p->expires ? p->expires : p->woken_at;
	u64 lat = now > start ? now - start : 0;
	if (!s)
		return 0;
	/* Counted at this CPU's next switch. */
	s->sample_pid = next_pid;
	s->sample_timer = p->expires != 0;
	s->sample_lat = lat;
	s->sample_irq = p->irq_at > p->expires ? p->irq_at - p->expires : 0;
	s->sample_preempt = now > p->irq_at ? now - p->irq_at : 0;
	bool late = lat > threshold_ns;
	s->measured += 1;
	bool baseline = !late && baseline_every && s->measured % baseline_every == 0;
	if (late)
		count(CNT_LATE);
	if (late || baseline) {
		if (window_allowed(s, now))
			defer_window(s, next, p, now, late);
		else if (late)
			count(CNT_THROTTLED);
	}
	return 0;
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(on_irq_entry, int irq, struct irqaction *action)
{
	log_ev(EV_IRQ_ENTRY, bpf_ktime_get_ns(), 0, irq, 0, 0, 0);
	return 0;
}

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(on_irq_exit, int irq, struct irqaction *action, int ret)
{
	log_ev(EV_IRQ_EXIT, bpf_ktime_get_ns(), 0, irq, ret, 0, 0);
	return 0;
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(on_softirq_entry, unsigned int vec)
{
	log_ev(EV_SOFTIRQ_ENTRY, bpf_ktime_get_ns(), 0, vec, 0, 0, 0);
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(on_softirq_exit, unsigned int vec)
{
	log_ev(EV_SOFTIRQ_EXIT, bpf_ktime_get_ns(), 0, vec, 0, 0, 0);
	return 0;
}

/* x86 interrupt vectors (irq_vectors:*): the IPIs (reschedule, function
 * calls such as TLB shootdowns, irq_work) that interrupt a CPU without an
 * irq_handler event. Not the LAPIC timer's (VEC_LOCAL_TIMER, which the
 * tracefs side logs): its entry is the clock read hrtimer_expire_entry
 * logs, its exit the callbacks' end. b: which vector (enum
 * vector). The loader skips the ones this kernel does not have. */
enum vector { VEC_LOCAL_TIMER = 0, VEC_RESCHEDULE = 1, VEC_CALL_FUNCTION = 2,
	      VEC_CALL_FUNCTION_SINGLE = 3, VEC_IRQ_WORK = 4 };

#define VECTOR_PROGRAMS(name, id)					\
SEC("tp_btf/" #name "_entry")						\
int BPF_PROG(on_##name##_entry, int vector)				\
{									\
	log_ev(EV_VECTOR_ENTRY, bpf_ktime_get_ns(), 0, vector, id, 0, 0);	\
	return 0;							\
}									\
SEC("tp_btf/" #name "_exit")						\
int BPF_PROG(on_##name##_exit, int vector)				\
{									\
	log_ev(EV_VECTOR_EXIT, bpf_ktime_get_ns(), 0, vector, id, 0, 0);	\
	return 0;							\
}

VECTOR_PROGRAMS(reschedule, VEC_RESCHEDULE)
VECTOR_PROGRAMS(call_function, VEC_CALL_FUNCTION)
VECTOR_PROGRAMS(call_function_single, VEC_CALL_FUNCTION_SINGLE)
VECTOR_PROGRAMS(irq_work, VEC_IRQ_WORK)

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	if (!follow_forks)
		return 0;
	u32 ppid = parent->pid, cpid = child->pid;
	if (!is_watched(ppid))
		return 0;
	u8 one = 1;
	/* Only a thread in the list user space reads back is watched: a bit
	 * without its entry would never be given back (its thread's end not
	 * seen, its histograms never taken) and would watch the next thread
	 * the kernel gives its id. */
	if (bpf_map_update_elem(&watched, &cpid, &one, BPF_ANY)) {
		count(CNT_WATCH_FULL);
		return 0;
	}
	u32 word = (cpid >> 6) & (WATCHED_WORDS - 1);
	u64 *w = bpf_map_lookup_elem(&watched_bits, &word);
	if (w)
		__sync_fetch_and_or(w, 1ULL << (cpid & 63));
	return 0;
}

/* A watched thread that ends leaves the set at once: the set holds the
 * threads alive, however many come and go between two rescans of user
 * space, and an id the kernel gives again names an unwatched thread. Its
 * histogram rows stay until user space takes them (a thread not in the set
 * with rows has ended, or left the selection). */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	u32 pid = p->pid;
	if (!is_watched(pid))
		return 0;
	bpf_map_delete_elem(&watched, &pid);
	u32 word = (pid >> 6) & (WATCHED_WORDS - 1);
	u64 *w = bpf_map_lookup_elem(&watched_bits, &word);
	if (w)
		__sync_fetch_and_and(w, ~(1ULL << (pid & 63)));
	return 0;
}
