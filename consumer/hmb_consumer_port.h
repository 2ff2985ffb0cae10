/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * hmb_consumer_port.h - the few primitives the consumer core needs, for the
 * kernel and for user space. Reads of words the producer may be writing are
 * single loads (READ_ONCE); ordering is a read fence, hmb_rmb(), paired
 * with the producer's release fences (hmb-trace-abi.rst, "Memory
 * ordering", "Fence summary").
 */
#ifndef HMB_CONSUMER_PORT_H
#define HMB_CONSUMER_PORT_H

#ifdef __KERNEL__
#include <linux/compiler.h>
#include <linux/string.h>
#include <asm/barrier.h>
#include <asm/byteorder.h>

/*
 * The fence orders our loads against the area's writer, which is one of:
 *  - a device writing by DMA into coherent host memory (nvme-pci's HMB
 *    trace area): dma_rmb() (arm64: dmb oshld, the outer shareable
 *    domain; smp_rmb()'s dmb ishld does not order against a DMA writer);
 *  - a process on the VM host writing the shared memory of an
 *    ivshmem-plain BAR (the mock): another CPU, even when this kernel is
 *    built without SMP, where smp_rmb() is only a compiler barrier:
 *    virt_rmb().
 * The core is compiled once for both backends, so it issues both. The
 * kernel promises no implication between them on every architecture
 * (parisc's dma_rmb() without SMP is a compiler barrier, its virt_rmb()
 * is mb()); on x86 both are compiler barriers, on arm64 the second is a
 * dmb ishld the first already covers.
 */
#define hmb_rmb()		do { dma_rmb(); virt_rmb(); } while (0)
#define hmb_memcpy(d, s, n)	memcpy((d), (s), (n))
#define hmb_memset(d, v, n)	memset((d), (v), (n))
/* User-space test hooks (below): never in the kernel. */
#define hmb_test_after_copy(c, core)	do { } while (0)
#define hmb_test_before_recheck(c, core)	do { } while (0)

static inline uint32_t hmb_load32(const void *p)
{
	return le32_to_cpu(READ_ONCE(*(const __le32 *)p));
}

static inline uint64_t hmb_load64(const void *p)
{
	return le64_to_cpu(READ_ONCE(*(const __le64 *)p));
}
#else
#include <string.h>

#define hmb_rmb()		__atomic_thread_fence(__ATOMIC_ACQUIRE)
#define hmb_memcpy(d, s, n)	memcpy((d), (s), (n))
#define hmb_memset(d, v, n)	memset((d), (v), (n))

/*
 * Test hooks, user space only. A producer that moves on between two reads
 * of the consumer is a race no test can hit on demand, so the unit tests
 * build the consumer with HMB_CONSUMER_TEST_HOOKS (consumer/meson.build)
 * and set a hook to a function that moves the producer right there:
 *  - hmb_consumer_after_copy: between the copy of a page and the re-check
 *    of its header (a torn copy);
 *  - hmb_consumer_before_recheck: in page_passed(), after the head hint
 *    and the next page's header were read, before the stalled page's
 *    header is read again (a lap during the check).
 * A build with the macro must define the pointers (consumer_unittest.cc
 * does). Everywhere else - the kernel module, the tools, the benchmark, the
 * fuzzer - the hooks compile to nothing.
 */
#ifdef HMB_CONSUMER_TEST_HOOKS
struct hmb_consumer;
extern void (*hmb_consumer_after_copy)(const struct hmb_consumer *c,
				       uint16_t core);
extern void (*hmb_consumer_before_recheck)(const struct hmb_consumer *c,
					   uint16_t core);
#define hmb_test_after_copy(c, core)					\
	do {								\
		if (hmb_consumer_after_copy)				\
			hmb_consumer_after_copy((c), (core));		\
	} while (0)
#define hmb_test_before_recheck(c, core)				\
	do {								\
		if (hmb_consumer_before_recheck)			\
			hmb_consumer_before_recheck((c), (core));	\
	} while (0)
#else
#define hmb_test_after_copy(c, core)	do { } while (0)
#define hmb_test_before_recheck(c, core)	do { } while (0)
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define hmb_le16(x)	__builtin_bswap16(x)
#define hmb_le32(x)	__builtin_bswap32(x)
#define hmb_le64(x)	__builtin_bswap64(x)
#else
#define hmb_le16(x)	(x)
#define hmb_le32(x)	(x)
#define hmb_le64(x)	(x)
#endif

static inline uint32_t hmb_load32(const void *p)
{
	return hmb_le32(__atomic_load_n((const uint32_t *)p, __ATOMIC_RELAXED));
}

static inline uint64_t hmb_load64(const void *p)
{
	return hmb_le64(__atomic_load_n((const uint64_t *)p, __ATOMIC_RELAXED));
}
#endif

/* Little-endian reads from a private copy (never from the area). */
static inline uint16_t hmb_get16(const void *p)
{
	const uint8_t *b = (const uint8_t *)p;

	return (uint16_t)(b[0] | b[1] << 8);
}

static inline uint32_t hmb_get32(const void *p)
{
	const uint8_t *b = (const uint8_t *)p;

	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
	       (uint32_t)b[3] << 24;
}

static inline uint64_t hmb_get64(const void *p)
{
	const uint8_t *b = (const uint8_t *)p;

	return (uint64_t)hmb_get32(b) | (uint64_t)hmb_get32(b + 4) << 32;
}

#endif /* HMB_CONSUMER_PORT_H */
