/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * startup.S - entry, exit and markers of the sample firmware, for ARM and
 * Thumb-2 alike (unified syntax; -marm / -mthumb chooses).
 *
 * Cortex-R5 (A/R profile) runs under qemu-arm, user mode: the loader gives
 * it a stack, and exit_group() ends the run. Cortex-M7 (M profile) runs on
 * qemu-system-arm -M mps2-an500: the core takes its stack and entry from
 * the vector table at address 0, and a semihosting SYS_EXIT ends the run.
 *
 * The markers are functions of their own, one instruction each, that the
 * counting plugin (hmb_insn_marks.c) watches by address; in assembly so
 * that the compiler can neither inline nor fold them.
 */
	.syntax unified

#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
	.section .vectors, "a"
	.word	__stack_top
	.word	_start			/* reset; a Thumb address */

	.section .text._start, "ax"
	.global	_start
	.type	_start, %function
_start:
	ldr	r0, =__bss_start	/* RAM that is not loaded starts zero */
	ldr	r1, =__bss_end
	movs	r2, #0
1:	cmp	r0, r1
	it	lo
	strlo	r2, [r0], #4
	blo	1b
	bl	fw_main
	/* SYS_EXIT: 0 ends with status 0, anything else with status 1. */
	movs	r1, r0
	ldr	r1, =0x20026		/* ADP_Stopped_ApplicationExit */
	it	ne
	ldrne	r1, =0x20023		/* ADP_Stopped_RunTimeErrorUnknown */
	movs	r0, #0x18
	bkpt	#0xab
2:	b	2b
	.size	_start, . - _start
	.ltorg
#else
	.section .text._start, "ax"
	.global	_start
	.type	_start, %function
_start:
	bl	fw_main
	movs	r7, #248		/* exit_group(r0) */
	svc	#0
1:	b	1b
	.size	_start, . - _start
#endif

	.text
	.macro	marker name
	.global	\name
	.type	\name, %function
\name:
	bx	lr
	.size	\name, . - \name
	.endm

	marker	bench_mark_begin	/* before an emit */
	marker	bench_mark_end		/* after it */
	marker	bench_mark_switch	/* that emit opened a page */
	marker	bench_mark_phase	/* end of a series of emits */
