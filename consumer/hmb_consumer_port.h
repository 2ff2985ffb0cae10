/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * hmb_consumer_port.h - the few primitives the consumer core needs, for the
 * kernel and for user space. Reads of words the producer may be writing are
 * single loads (READ_ONCE); ordering is an acquire fence (smp_rmb), paired
 * with the producer's release fences.
 */
#ifndef HMB_CONSUMER_PORT_H
#define HMB_CONSUMER_PORT_H

#ifdef __KERNEL__
#include <linux/compiler.h>
#include <linux/string.h>
#include <asm/barrier.h>
#include <asm/byteorder.h>

#define hmb_rmb()		smp_rmb()
#define hmb_memcpy(d, s, n)	memcpy((d), (s), (n))
#define hmb_memset(d, v, n)	memset((d), (v), (n))

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
