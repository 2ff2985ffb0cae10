/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * nvme_host_c.h - the host side of the command join: the nvme driver's
 * nvme:nvme_setup_cmd and nvme:nvme_complete_rq events of a trace.dat, read
 * with libtracecmd (C only: see capture_c.h) from the one buffer that holds
 * them: the top buffer (where `hmbtrace-cmd record` puts them), else the
 * first instance that does (`trace-cmd record -B hmb -e hmb -e nvme:...`
 * puts them in the hmb instance). One buffer only: two that both hold them
 * hold the same commands.
 * Fields are read with bounds checks against each record; a record whose
 * fields do not fit is counted, not used.
 */
#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_NVME_HOST_C_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_NVME_HOST_C_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum hmb_nvme_host_kind { HMB_NVME_SETUP = 1, HMB_NVME_COMPLETE = 2 };

struct hmb_nvme_host_event {
	enum hmb_nvme_host_kind kind;
	uint64_t ts;		/* ftrace time, ns */
	int cpu;
	uint32_t ctrl;		/* ctrl_id: nvmeN */
	uint16_t qid;
	uint16_t cid;
	uint8_t opcode;		/* setup */
	uint32_t nsid;		/* setup */
	uint16_t status;	/* complete */
};

/* The buffer the events were read from. */
struct hmb_nvme_host_source {
	char instance[64];	/* "" for the top buffer */
	char clock[32];		/* its trace clock ("" if the file does not say) */
};

/*
 * Calls `cb` for every nvme_setup_cmd and nvme_complete_rq event of the
 * buffer of `path` that holds them (see above), in host time order (a
 * non-zero return stops). Returns 0, with that buffer in *src if src is
 * not NULL (the top buffer, clock "", when no buffer holds any: recorded,
 * but no command issued); 1 when the file's formats have no nvme events
 * (not recorded); -1 with a message in err. *malformed counts events
 * whose fields could not be read.
 */
int hmb_nvme_host_read(const char *path,
		       int (*cb)(const struct hmb_nvme_host_event *ev, void *data),
		       void *data, uint64_t *malformed, struct hmb_nvme_host_source *src,
		       char *err, size_t err_len);

/*
 * hmb_nvme_host_read() from a file already open with every instance
 * (tracecmd_walk_c.h; its walks start from the first event): one open
 * serves this read and the caller's.
 */
struct hmb_tracecmd_file;
int hmb_nvme_host_read_file(struct hmb_tracecmd_file *f,
			    int (*cb)(const struct hmb_nvme_host_event *ev, void *data),
			    void *data, uint64_t *malformed, struct hmb_nvme_host_source *src,
			    char *err, size_t err_len);

#ifdef __cplusplus
}
#endif

#endif /* HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_NVME_HOST_C_H_ */
