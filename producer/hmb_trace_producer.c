// SPDX-License-Identifier: (GPL-2.0-only WITH Linux-syscall-note) OR MIT
/*
 * hmb_trace_producer.c - reference firmware producer for the HMB trace area.
 *
 * Only plain stores and release fences reach the area: the host never writes
 * it, so there is nothing to read back and nothing to wait for. Words a
 * consumer polls (commit, state, producer_gen) are 32-bit, so they are
 * single-copy atomic on 32-bit firmware cores too.
 */
#include "hmb_trace_producer.h"

/* Release fence: orders every earlier store before every later store. */
#define hmb_release()	hmb_trace_release()

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define hmb_cpu_to_le16(x)	__builtin_bswap16(x)
#define hmb_cpu_to_le32(x)	__builtin_bswap32(x)
#define hmb_cpu_to_le64(x)	__builtin_bswap64(x)
#else
#define hmb_cpu_to_le16(x)	(x)
#define hmb_cpu_to_le32(x)	(x)
#define hmb_cpu_to_le64(x)	(x)
#endif

static void put16(void *p, uint16_t v)
{
	*(volatile uint16_t *)p = hmb_cpu_to_le16(v);
}

static void put32(void *p, uint32_t v)
{
	*(volatile uint32_t *)p = hmb_cpu_to_le32(v);
}

static void put64(void *p, uint64_t v)
{
	*(volatile uint64_t *)p = hmb_cpu_to_le64(v);
}

static uint16_t get16(const void *p)
{
	return hmb_cpu_to_le16(*(const volatile uint16_t *)p);
}

static uint32_t get32(const void *p)
{
	return hmb_cpu_to_le32(*(const volatile uint32_t *)p);
}

static uint64_t get64(const void *p)
{
	return hmb_cpu_to_le64(*(const volatile uint64_t *)p);
}

/* A word another context writes (the freeze): read it every time. */
static uint32_t load32(const uint32_t *p)
{
	return *(const volatile uint32_t *)p;
}

/* No libc: small copy and fill that the compiler may inline. */
static void copy_bytes(uint8_t *dst, const uint8_t *src, uint32_t n)
{
	while (n >= 8) {
		__builtin_memcpy(dst, src, 8);
		dst += 8;
		src += 8;
		n -= 8;
	}
	while (n--)
		*dst++ = *src++;
}

void hmb_trace_copy(void *dst, const void *src, uint32_t n)
{
	copy_bytes((uint8_t *)dst, (const uint8_t *)src, n);
}

static void zero_bytes(uint8_t *dst, uint32_t n)
{
	while (n--)
		*dst++ = 0;
}

/* Copy a NUL-terminated string into a fixed field; fail if it does not fit. */
static int put_name(char *dst, const char *src, uint32_t cap)
{
	uint32_t i = 0;

	if (!src)
		src = "";
	for (; src[i]; i++) {
		if (i + 1 >= cap)
			return HMB_TRACE_EINVAL;
		dst[i] = src[i];
	}
	for (; i < cap; i++)
		dst[i] = 0;
	return 0;
}

static uint32_t align_up32(uint32_t v, uint32_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static uint64_t align_up64(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* u64 / u32 by shift and subtract: no libgcc helper on 32-bit cores. */
static uint64_t div_u64_u32(uint64_t n, uint32_t d)
{
	uint64_t q = 0, r = 0;
	int i;

	for (i = 63; i >= 0; i--) {
		r = (r << 1) | ((n >> i) & 1);
		if (r >= d) {
			r -= d;
			q |= 1ull << i;
		}
	}
	return q;
}

static uint32_t data_size(uint32_t page_size)
{
	return page_size - (uint32_t)sizeof(struct hmb_trace_page_header);
}

/* The command attribution of event @id, or NULL: it has none. */
static const struct hmb_trace_cmd_desc *
cmd_desc(const struct hmb_trace_producer_config *cfg, uint16_t id)
{
	uint16_t i;

	for (i = 0; i < cfg->nr_cmds; i++)
		if (cfg->cmds[i].id == id &&
		    cfg->cmds[i].kind != HMB_TRACE_CMD_NONE)
			return &cfg->cmds[i];
	return NULL;
}

/* Bytes one serialised event entry takes in the dictionary. */
static uint32_t event_entry_len(const struct hmb_trace_producer_config *cfg,
				const struct hmb_trace_event_desc *ev)
{
	uint32_t len = sizeof(struct hmb_trace_dict_event);
	uint16_t i;

	len += ev->nr_fields * (uint32_t)sizeof(struct hmb_trace_dict_field);
	for (i = 0; i < ev->nr_fields; i++)
		len += ev->fields[i].nr_values *
		       (uint32_t)sizeof(struct hmb_trace_dict_value);
	len = align_up32(len, 8);
	if (cmd_desc(cfg, ev->id))
		len += (uint32_t)sizeof(struct hmb_trace_dict_cmd);
	return len;
}

static uint32_t get_le(const uint8_t *b, uint32_t n)
{
	uint32_t v = 0;

	while (n--)
		v = v << 8 | b[n];
	return v;
}

/*
 * The entries' bytes of cfg->dict_blob (after its header), and their
 * count in *@nr; 0 if there is none or it is not a dictionary.
 */
static uint32_t blob_entries(const struct hmb_trace_producer_config *cfg,
			     uint16_t *nr)
{
	const uint8_t *b = (const uint8_t *)cfg->dict_blob;
	uint32_t total;

	*nr = 0;
	if (!b || cfg->dict_blob_len < sizeof(struct hmb_trace_dict_header))
		return 0;
	total = get_le(b + offsetof(struct hmb_trace_dict_header, total_len), 4);
	if (get_le(b, 4) != HMB_TRACE_DICT_MAGIC ||
	    get_le(b + offsetof(struct hmb_trace_dict_header, version), 2) !=
	    HMB_TRACE_DICT_VERSION ||
	    total < sizeof(struct hmb_trace_dict_header) ||
	    total > cfg->dict_blob_len || total % 8)
		return 0;
	*nr = (uint16_t)get_le(b + offsetof(struct hmb_trace_dict_header,
					    nr_events), 2);
	return total - (uint32_t)sizeof(struct hmb_trace_dict_header);
}

/* Bytes cfg->events take serialised. */
static uint32_t events_needed(const struct hmb_trace_producer_config *cfg)
{
	uint32_t len = 0;
	uint16_t i;

	for (i = 0; i < cfg->nr_events; i++)
		len += event_entry_len(cfg, &cfg->events[i]);
	return len;
}

/* The dictionary's bytes: header, @events_len of serialised events, blob. */
static uint32_t dict_needed_with(const struct hmb_trace_producer_config *cfg,
				 uint32_t events_len)
{
	uint16_t nr;

	return (uint32_t)sizeof(struct hmb_trace_dict_header) + events_len +
	       blob_entries(cfg, &nr);
}

static uint32_t dict_needed(const struct hmb_trace_producer_config *cfg)
{
	return dict_needed_with(cfg, events_needed(cfg));
}

static int geometry_ok(const struct hmb_trace_producer_config *cfg)
{
	uint32_t ps = cfg->page_size;
	uint16_t nr = 0;

	if (ps < HMB_TRACE_PAGE_SIZE_MIN || ps > HMB_TRACE_PAGE_SIZE_MAX ||
	    (ps & (ps - 1)))
		return 0;
	if (!cfg->nr_cores || cfg->nr_cores > HMB_TRACE_MAX_CORES)
		return 0;
	if (sizeof(struct hmb_trace_meta) +
	    cfg->nr_cores * sizeof(struct hmb_trace_core) > ps)
		return 0;
	if (cfg->nr_events && !cfg->events)
		return 0;
	if (cfg->nr_cmds && !cfg->cmds)
		return 0;
	if (cfg->dict_blob && !blob_entries(cfg, &nr))
		return 0;
	if ((uint32_t)cfg->nr_events + nr > 0xffff)
		return 0;
	return 1;
}

static uint32_t dict_alloc_for(const struct hmb_trace_producer_config *cfg,
				uint32_t need)
{
	if (cfg->dict_len > need)
		need = cfg->dict_len;
	return (uint32_t)align_up64(need, cfg->page_size);
}

uint64_t hmb_trace_area_size(const struct hmb_trace_producer_config *cfg)
{
	uint64_t rings;

	if (!cfg || !geometry_ok(cfg) ||
	    cfg->pages_per_core < HMB_TRACE_PAGES_PER_CORE_MIN ||
	    cfg->pages_per_core > HMB_TRACE_PAGES_PER_CORE_MAX)
		return 0;
	rings = (uint64_t)cfg->nr_cores * cfg->pages_per_core * cfg->page_size;
	return cfg->page_size + dict_alloc_for(cfg, dict_needed(cfg)) + rings;
}

static int name_fits(const char *s, uint32_t cap)
{
	uint32_t i;

	if (!s)
		return 1;
	for (i = 0; i < cap; i++)
		if (!s[i])
			return 1;
	return 0;
}

/* Everything write_dictionary() could refuse, checked before the area is touched. */
static int dictionary_ok(const struct hmb_trace_producer_config *cfg)
{
	uint16_t i, f, v;

	for (i = 0; i < cfg->nr_events; i++) {
		const struct hmb_trace_event_desc *ev = &cfg->events[i];

		if (!ev->id || !name_fits(ev->name, HMB_TRACE_NAME_LEN) ||
		    !name_fits(ev->format, HMB_TRACE_FORMAT_LEN) ||
		    (ev->nr_fields && !ev->fields))
			return 0;
		for (f = 0; f < ev->nr_fields; f++) {
			const struct hmb_trace_field_desc *fd = &ev->fields[f];

			if (!name_fits(fd->name, HMB_TRACE_FIELD_NAME_LEN) ||
			    (fd->nr_values && !fd->values))
				return 0;
			for (v = 0; v < fd->nr_values; v++)
				if (!name_fits(fd->values[v].name,
					       HMB_TRACE_VALUE_NAME_LEN))
					return 0;
		}
	}
	return 1;
}

static int write_event(uint8_t *dst, const struct hmb_trace_producer_config *cfg,
		       const struct hmb_trace_event_desc *ev)
{
	struct hmb_trace_dict_event *e = (struct hmb_trace_dict_event *)dst;
	const struct hmb_trace_cmd_desc *cmd = cmd_desc(cfg, ev->id);
	uint8_t *pos = dst + sizeof(*e);
	uint32_t len = event_entry_len(cfg, ev);
	uint16_t i, v;

	zero_bytes(dst, len);
	put16(&e->id, ev->id);
	put16(&e->nr_fields, ev->nr_fields);
	put32(&e->entry_len, len);
	e->role = ev->role;
	e->key_field = ev->key_field;
	e->latency_field = ev->latency_field;
	e->qid_field = ev->qid_field;
	e->cid_field = ev->cid_field;
	e->value_field = ev->value_field;
	put16(&e->pair_id, ev->pair_id);
	if (put_name(e->name, ev->name, HMB_TRACE_NAME_LEN) ||
	    put_name(e->format, ev->format, HMB_TRACE_FORMAT_LEN))
		return HMB_TRACE_EINVAL;

	for (i = 0; i < ev->nr_fields; i++) {
		const struct hmb_trace_field_desc *fd = &ev->fields[i];
		struct hmb_trace_dict_field *f = (struct hmb_trace_dict_field *)pos;

		if (put_name(f->name, fd->name, HMB_TRACE_FIELD_NAME_LEN))
			return HMB_TRACE_EINVAL;
		put16(&f->offset, fd->offset);
		put16(&f->size, fd->size);
		f->type = fd->type;
		f->display = fd->display;
		put16(&f->nr_values, fd->nr_values);
		pos += sizeof(*f);
	}
	for (i = 0; i < ev->nr_fields; i++) {
		const struct hmb_trace_field_desc *fd = &ev->fields[i];

		for (v = 0; v < fd->nr_values; v++) {
			struct hmb_trace_dict_value *val =
				(struct hmb_trace_dict_value *)pos;

			put64(&val->value, fd->values[v].value);
			if (put_name(val->name, fd->values[v].name,
				     HMB_TRACE_VALUE_NAME_LEN))
				return HMB_TRACE_EINVAL;
			pos += sizeof(*val);
		}
	}
	if (cmd) {
		/* The trailer ends the entry, 8-byte aligned after the values. */
		struct hmb_trace_dict_cmd *c = (struct hmb_trace_dict_cmd *)
			(dst + len - sizeof(struct hmb_trace_dict_cmd));

		put16(&c->type, HMB_TRACE_DICT_EXT_CMD);
		put16(&c->len, sizeof(*c));
		c->kind = cmd->kind;
		c->tag_field = cmd->tag_field;
		c->resource_field = cmd->resource_field;
	}
	return 0;
}

/* cfg->events serialised at @dst; events_needed() bytes. */
static int write_events(uint8_t *dst, const struct hmb_trace_producer_config *cfg)
{
	uint32_t off = 0;
	uint16_t i;
	int err;

	for (i = 0; i < cfg->nr_events; i++) {
		err = write_event(dst + off, cfg, &cfg->events[i]);
		if (err)
			return err;
		off += event_entry_len(cfg, &cfg->events[i]);
	}
	return 0;
}

/*
 * The serializer of cfg->events, as init calls it. Only
 * hmb_trace_producer_init() refers to it: a firmware that embeds a
 * pre-built dictionary and calls hmb_trace_producer_init_blob() instead
 * does not link it (--gc-sections), which is most of init's code.
 */
struct dict_serializer {
	int (*ok)(const struct hmb_trace_producer_config *cfg);
	uint32_t (*needed)(const struct hmb_trace_producer_config *cfg);
	int (*write)(uint8_t *dst, const struct hmb_trace_producer_config *cfg);
};

static const struct dict_serializer events_serializer = {
	dictionary_ok, events_needed, write_events,
};

/* The dictionary at @dst: @events_len bytes of serialised events (@ser), then the blob's. */
static int write_dictionary(uint8_t *dst, uint32_t cap,
			    const struct hmb_trace_producer_config *cfg,
			    const struct dict_serializer *ser,
			    uint32_t events_len)
{
	struct hmb_trace_dict_header *h = (struct hmb_trace_dict_header *)dst;
	uint32_t used = dict_needed_with(cfg, events_len);
	uint32_t off = sizeof(*h);
	uint32_t blob_len;
	uint16_t blob_nr;
	int err;

	if (used > cap)
		return HMB_TRACE_ENOSPC;
	if (ser) {
		err = ser->write(dst + off, cfg);
		if (err)
			return err;
		off += events_len;
	}
	blob_len = blob_entries(cfg, &blob_nr);
	if (blob_len)
		hmb_trace_copy(dst + off, (const uint8_t *)cfg->dict_blob +
			       sizeof(*h), blob_len);
	off += blob_len;
	zero_bytes(dst + off, cap - off);
	put32(&h->magic, HMB_TRACE_DICT_MAGIC);
	put16(&h->version, HMB_TRACE_DICT_VERSION);
	put16(&h->nr_events, (uint16_t)(cfg->nr_events + blob_nr));
	put32(&h->total_len, used);
	put32(&h->reserved, 0);
	return 0;
}

static struct hmb_trace_core *core_desc_at(void *area, uint16_t core)
{
	return (struct hmb_trace_core *)((uint8_t *)area +
					 sizeof(struct hmb_trace_meta)) + core;
}

static struct hmb_trace_core *core_desc(struct hmb_trace_producer *p,
					uint16_t core)
{
	return core_desc_at(p->area, core);
}

/*
 * Cores whose final next_seq the previous generation left in the area, or 0
 * if there was no previous generation we can trust (first init, or a meta
 * page this producer would not have written).
 */
static uint16_t previous_cores(const struct hmb_trace_meta *m,
			       uint32_t page_size)
{
	uint16_t n = get16(&m->nr_cores);

	if (get32(&m->magic) != HMB_TRACE_MAGIC ||
	    get16(&m->core_len) != sizeof(struct hmb_trace_core) ||
	    get32(&m->core_offset) != sizeof(struct hmb_trace_meta) ||
	    !get32(&m->producer_gen) || n > HMB_TRACE_MAX_CORES ||
	    sizeof(struct hmb_trace_meta) +
	    n * sizeof(struct hmb_trace_core) > page_size)
		return 0;
	return n;
}

/* Ring slot -> page address; slots avoid 64-bit division on 32-bit cores. */
static uint8_t *ring_page(struct hmb_trace_producer *p, uint16_t core,
			  uint32_t slot)
{
	return p->area + p->ring_offset +
	       ((uint64_t)core * p->pages_per_core + slot) * p->page_size;
}

/* Init with @ser serialising cfg->events, or with none (the blob alone). */
static int producer_init(struct hmb_trace_producer *p, void *area,
			 uint64_t area_len,
			 const struct hmb_trace_producer_config *cfg,
			 const struct dict_serializer *ser)
{
	struct hmb_trace_meta *m = (struct hmb_trace_meta *)area;
	uint64_t prev_next[HMB_TRACE_MAX_CORES];
	uint32_t ppc, dlen, pg, gen = 0, events_len = 0;
	uint16_t prev_cores;
	uint64_t ring_off;
	uint16_t c;
	int err;

	if (!p || !area || !cfg || !geometry_ok(cfg) ||
	    area_len < 2ull * cfg->page_size)
		return HMB_TRACE_EINVAL;
	if (ser) {
		if (!ser->ok(cfg))
			return HMB_TRACE_EINVAL;
		events_len = ser->needed(cfg);
	} else if (cfg->nr_events) {
		return HMB_TRACE_EINVAL;	/* events need the serializer */
	}
	dlen = dict_alloc_for(cfg, dict_needed_with(cfg, events_len));
	ring_off = (uint64_t)cfg->page_size + dlen;
	if (ring_off >= area_len)
		return HMB_TRACE_ENOSPC;
	ppc = cfg->pages_per_core;
	if (!ppc) {
		uint64_t fit = div_u64_u32(div_u64_u32(area_len - ring_off,
						       cfg->page_size),
					   cfg->nr_cores);

		ppc = fit > HMB_TRACE_PAGES_PER_CORE_MAX ?
			HMB_TRACE_PAGES_PER_CORE_MAX : (uint32_t)fit;
	}
	if (ppc < HMB_TRACE_PAGES_PER_CORE_MIN ||
	    ppc > HMB_TRACE_PAGES_PER_CORE_MAX ||
	    ring_off + (uint64_t)cfg->nr_cores * ppc * cfg->page_size > area_len)
		return HMB_TRACE_ENOSPC;

	/*
	 * A live area keeps counting generations across resets, so a consumer
	 * that missed the INIT state still sees a new generation. 0 is never
	 * used: it marks a page header that no generation has opened.
	 */
	if (get32(&m->magic) == HMB_TRACE_MAGIC)
		gen = get32(&m->producer_gen);
	if (gen + 1 == 0)
		gen = 0;
	prev_cores = cfg->prev_unknown ? 0 : previous_cores(m, cfg->page_size);
	for (c = 0; c < prev_cores && c < cfg->nr_cores; c++)
		prev_next[c] = get64(&core_desc_at(area, c)->next_seq);

	put32(&m->state, HMB_TRACE_STATE_INIT);
	hmb_release(); /* pairs with the consumer's acquire after reading state */
	put32(&m->producer_gen, gen + 1);

	/*
	 * Every core restarts with no page (limit 0: no append takes the
	 * fast path), counters 0; a firmware reset forgets what the host
	 * set: not armed, N = 0, overwrite, no freeze hooks.
	 */
	zero_bytes((uint8_t *)p, sizeof(*p));
	p->area = (uint8_t *)area;
	p->area_len = area_len;
	p->page_size = cfg->page_size;
	p->pages_per_core = ppc;
	p->nr_cores = cfg->nr_cores;
	p->producer_gen = gen + 1;
	p->ring_offset = ring_off;
	p->max_payload = hmb_trace_max_payload(p);
	p->freeze_settle = div_u64_u32(cfg->clock_hz, 10);

	/*
	 * Invalidate every page so no header of the previous life matches;
	 * the rings are contiguous, core after core (ring_page()).
	 */
	for (pg = 0; pg < cfg->nr_cores * ppc; pg++) {
		struct hmb_trace_page_header *h = (struct hmb_trace_page_header *)
			(p->area + ring_off + (uint64_t)pg * cfg->page_size);

		put32(&h->commit, HMB_TRACE_COMMIT_BUSY);
		hmb_release(); /* pairs with consumer's re-check of commit */
		put64(&h->page_seq, ~0ull);
		put32(&h->producer_gen, 0);
	}

	err = write_dictionary(p->area + cfg->page_size, dlen, cfg, ser,
			       events_len);
	if (err)
		return err;

	/* Past magic, state and producer_gen: written below or reserved. */
	zero_bytes((uint8_t *)&m->page_size,
		   cfg->page_size -
		   (uint32_t)((uint8_t *)&m->page_size - (uint8_t *)m));
	for (c = 0; c < cfg->nr_cores; c++) {
		p->core[c].desc = core_desc(p, c);
		put64(&core_desc(p, c)->head_page, ~0ull);
		if (c < prev_cores) {
			put64(&core_desc(p, c)->prev_next_seq, prev_next[c]);
			put32(&core_desc(p, c)->prev_gen, gen);
		}
	}

	put16(&m->abi_major, HMB_TRACE_ABI_MAJOR);
	put16(&m->abi_minor, HMB_TRACE_ABI_MINOR);
	put32(&m->meta_len, sizeof(*m));
	put32(&m->page_size, cfg->page_size);
	put16(&m->nr_cores, cfg->nr_cores);
	put16(&m->core_len, sizeof(struct hmb_trace_core));
	put32(&m->pages_per_core, ppc);
	put64(&m->area_len, area_len);
	put64(&m->dict_offset, cfg->page_size);
	put32(&m->dict_len, dlen);
	put32(&m->flags, HMB_TRACE_META_OVERWRITE | HMB_TRACE_META_FREEZE);
	put64(&m->ring_offset, ring_off);
	put64(&m->clock_hz, cfg->clock_hz);
	copy_bytes(m->build_id, cfg->build_id, HMB_TRACE_BUILD_ID_LEN);
	put32(&m->core_offset, sizeof(*m));
	put16(&m->freeze_core, 0xffff);	/* freeze 0: RUNNING */
	put32(&m->magic, HMB_TRACE_MAGIC);
	hmb_release(); /* everything above is visible before READY */
	put32(&m->state, HMB_TRACE_STATE_READY);
	return 0;
}

int hmb_trace_producer_init(struct hmb_trace_producer *p, void *area,
			    uint64_t area_len,
			    const struct hmb_trace_producer_config *cfg)
{
	return producer_init(p, area, area_len, cfg, &events_serializer);
}

int hmb_trace_producer_init_blob(struct hmb_trace_producer *p, void *area,
				 uint64_t area_len,
				 const struct hmb_trace_producer_config *cfg)
{
	return producer_init(p, area, area_len, cfg, 0);
}

uint32_t hmb_trace_max_payload(const struct hmb_trace_producer *p)
{
	uint32_t room = data_size(p->page_size) -
			(uint32_t)sizeof(struct hmb_trace_record_header);

	room &= ~(HMB_TRACE_RECORD_ALIGN - 1);
	return room > 0xffffu ? 0xffffu : room;
}

/* Close the current page (if any) and open the next slot of the ring. */
static void open_page(struct hmb_trace_producer *p, uint16_t core, uint64_t ts)
{
	struct hmb_trace_producer_core *pc = &p->core[core];
	struct hmb_trace_page_header *h;
	struct hmb_trace_core *cd = core_desc(p, core);
	uint64_t seq = 0;
	uint32_t slot = 0;

	if (pc->page) {
		h = (struct hmb_trace_page_header *)pc->page;
		put32(&h->commit, HMB_TRACE_COMMIT_CLOSED |
				  HMB_TRACE_COMMIT(pc->records, pc->bytes));
		seq = pc->page_seq + 1;
		slot = pc->slot + 1 == p->pages_per_core ? 0 : pc->slot + 1;
	}
	h = (struct hmb_trace_page_header *)ring_page(p, core, slot);

	/*
	 * Overwrite protocol, paired with the consumer's copy-then-recheck:
	 * BUSY first, so a consumer copying the old page sees either BUSY or
	 * a new page_seq when it re-checks after its copy.
	 */
	put32(&h->commit, HMB_TRACE_COMMIT_BUSY);
	hmb_release();
	put64(&h->page_seq, seq);
	put64(&h->first_seq, pc->next_seq);
	put64(&h->base_ts, ts);
	put32(&h->producer_gen, p->producer_gen);
	put32(&h->flags, seq == 0 ? HMB_TRACE_PAGE_FIRST : 0);
	put32(&h->reserved0, 0);
	put64(&h->reserved1, 0);
	hmb_release(); /* header before commit = 0; pairs with consumer acquire */
	put32(&h->commit, 0);
	put64(&cd->head_page, seq);
	put64(&cd->pages_written, seq + 1);

	pc->page = (uint8_t *)h;
	pc->page_seq = seq;
	pc->slot = slot;
	pc->base_ts = ts;
	pc->limit = data_size(p->page_size);
	pc->bytes = 0;
	pc->records = 0;
}


/* Does the freeze keep this core from writing? */
static int frozen_here(struct hmb_trace_producer *p,
		       const struct hmb_trace_producer_core *pc)
{
	uint32_t st = HMB_TRACE_FREEZE_STATE(load32(&p->freeze_word));

	if (st == HMB_TRACE_FREEZE_RUNNING)
		return 0;
	return st == HMB_TRACE_FREEZE_FROZEN || pc->next_seq >= pc->freeze_stop;
}

/* @len: the payload's, or 0xffffffff if fixed_len + var_len overflowed. */
static int reserve(struct hmb_trace_producer *p, uint16_t core,
		   uint16_t event_id, uint64_t ts, uint32_t len)
{
	struct hmb_trace_producer_core *pc;
	uint32_t size;
	uint8_t *r;

	if (core >= p->nr_cores)
		return HMB_TRACE_EINVAL;
	pc = &p->core[core];
	if (frozen_here(p, pc))
		return HMB_TRACE_FROZEN;
	if (event_id == 0 || len > p->max_payload) {
		put64(&pc->desc->dropped, ++pc->dropped);
		return event_id == 0 ? HMB_TRACE_EINVAL : HMB_TRACE_E2BIG;
	}
	size = HMB_TRACE_RECORD_SIZE(len);
	if (!pc->page || pc->bytes + size > pc->limit ||
	    ts < pc->base_ts || ts - pc->base_ts > 0xffffffffull) {
		/* Ring mode STOP: the next page would overwrite a kept one. */
		if (load32(&p->ring_stop_word) && p->ring_full && pc->page &&
		    pc->page_seq + 1 >= pc->stop_from + p->pages_per_core) {
			p->ring_full(p, core, ts);
			return HMB_TRACE_FROZEN;
		}
		open_page(p, core, ts);
	}

	r = pc->page + sizeof(struct hmb_trace_page_header) + pc->bytes;
	/* The whole record header in one store: event_id, len, ts_delta. */
	put64(r, (uint64_t)event_id | (uint64_t)len << 16 |
		 (uint64_t)(uint32_t)(ts - pc->base_ts) << 32);
	zero_bytes(r + sizeof(struct hmb_trace_record_header) + len,
		   size - (uint32_t)sizeof(struct hmb_trace_record_header) - len);
	return 0;
}

int hmb_trace_reserve_slow(struct hmb_trace_producer *p, uint16_t core,
			   uint16_t event_id, uint64_t ts,
			   uint32_t fixed_len, uint32_t var_len)
{
	uint32_t len = fixed_len + var_len;

	return reserve(p, core, event_id, ts,
		       len < fixed_len ? 0xffffffffu : len);
}

int hmb_trace_reserve_miss(struct hmb_trace_producer *p, uint16_t core,
			   uint16_t event_id, uint32_t len)
{
	if (core >= HMB_TRACE_MAX_CORES)
		return HMB_TRACE_EINVAL;
	return reserve(p, core, event_id, p->core[core].miss_ts, len);
}

void hmb_trace_commit_slow(struct hmb_trace_producer *p, uint16_t core)
{
	if (p->core[core].next_seq == p->core[core].freeze_stop &&
	    HMB_TRACE_FREEZE_STATE(load32(&p->freeze_word)) ==
	    HMB_TRACE_FREEZE_TRIGGERED && p->freeze_done)
		p->freeze_done(p);
}

int hmb_trace_emit(struct hmb_trace_producer *p, uint16_t core,
		   uint16_t event_id, uint64_t ts,
		   const void *fixed, uint32_t fixed_len,
		   const void *var, uint32_t var_len)
{
	struct hmb_trace_append a;
	uint8_t *dst;
	int err;

	err = hmb_trace_reserve(p, core, event_id, ts, fixed_len, var_len, &a);
	if (err)
		return err;
	dst = hmb_trace_payload(&a);
	if (fixed_len)
		copy_bytes(dst, (const uint8_t *)fixed, fixed_len);
	if (var_len)
		copy_bytes(dst + fixed_len, (const uint8_t *)var, var_len);
	return hmb_trace_commit(p, core, &a);
}

/*
 * ---- The freeze ----
 *
 *   RUNNING --trigger--> TRIGGERED --every core wrote N, or settle--> FROZEN
 *      ^                                                               |
 *      +------------------------ re-arm -------------------------------+
 *
 * The trigger sets every core's freeze_stop (its next_seq + N) and
 * freeze_seq before it publishes TRIGGERED; a core reads the word before
 * its stop. Plain stores: the word is written by one context at a time
 * (a trigger, the control channel) as the header says.
 */
static void publish_freeze(struct hmb_trace_producer *p, uint32_t word)
{
	struct hmb_trace_meta *m = (struct hmb_trace_meta *)p->area;

	*(volatile uint32_t *)&p->freeze_word = word;
	put32(&m->freeze, word);
}

static void frozen_if_done(struct hmb_trace_producer *p)
{
	uint32_t w = load32(&p->freeze_word);
	uint16_t c;

	for (c = 0; c < p->nr_cores; c++)
		if (p->core[c].next_seq < p->core[c].freeze_stop)
			return;
	publish_freeze(p, HMB_TRACE_FREEZE_WORD(HMB_TRACE_FREEZE_FROZEN,
						HMB_TRACE_FREEZE_REASON(w),
						HMB_TRACE_FREEZE_COUNT(w)));
}

static int freeze_now(struct hmb_trace_producer *p, uint16_t core,
		      uint32_t reason, uint64_t detail, uint64_t ts,
		      uint32_t n_after)
{
	struct hmb_trace_meta *m = (struct hmb_trace_meta *)p->area;
	uint32_t w = load32(&p->freeze_word);
	uint32_t count = HMB_TRACE_FREEZE_COUNT(w) + 1;
	uint16_t c;

	if (HMB_TRACE_FREEZE_STATE(w) != HMB_TRACE_FREEZE_RUNNING)
		return HMB_TRACE_FROZEN;
	if (count > 0xffff)
		count = 1;
	for (c = 0; c < p->nr_cores; c++) {
		struct hmb_trace_producer_core *pc = &p->core[c];

		pc->freeze_stop = pc->next_seq + n_after;
		put64(&core_desc(p, c)->freeze_seq, pc->next_seq);
	}
	put16(&m->freeze_core, core);
	put64(&m->freeze_ts, ts);
	put64(&m->freeze_detail, detail);
	p->freeze_ts = ts;
	p->freeze_done = frozen_if_done;
	/*
	 * Positions and details before the word: pairs with the consumer's
	 * dma_rmb() after it reads the word (hmb_consumer_freeze_word()).
	 */
	hmb_release();
	publish_freeze(p, HMB_TRACE_FREEZE_WORD(n_after ?
						HMB_TRACE_FREEZE_TRIGGERED :
						HMB_TRACE_FREEZE_FROZEN,
						reason, count));
	return 0;
}

/* Ring mode STOP: a core's next page would overwrite a kept one. */
static int ring_full(struct hmb_trace_producer *p, uint16_t core, uint64_t ts)
{
	return freeze_now(p, core, HMB_TRACE_FREEZE_RING_FULL, 0, ts, 0);
}

void hmb_trace_freeze_config(struct hmb_trace_producer *p,
			     uint64_t latency_ticks, uint32_t n_after)
{
	p->freeze_latency = latency_ticks;
	p->freeze_after = n_after;
	p->freeze_armed = 1;
}

int hmb_trace_freeze(struct hmb_trace_producer *p, uint16_t core,
		     uint32_t reason, uint64_t detail, uint64_t ts)
{
	if (reason == HMB_TRACE_FREEZE_NONE ||
	    reason >= HMB_TRACE_FREEZE_REASON_NR)
		return HMB_TRACE_EINVAL;
	if (reason == HMB_TRACE_FREEZE_RING_FULL)
		return freeze_now(p, core, reason, detail, ts, 0);
	if (reason != HMB_TRACE_FREEZE_HOST && !p->freeze_armed)
		return HMB_TRACE_FROZEN;
	return freeze_now(p, core, reason, detail, ts, p->freeze_after);
}

int hmb_trace_freeze_latency(struct hmb_trace_producer *p, uint16_t core,
			     uint64_t latency_ticks, uint64_t detail,
			     uint64_t ts)
{
	if (!p->freeze_armed || !p->freeze_latency ||
	    latency_ticks < p->freeze_latency)
		return HMB_TRACE_FROZEN;
	return freeze_now(p, core, HMB_TRACE_FREEZE_LATENCY, detail, ts,
			  p->freeze_after);
}

void hmb_trace_freeze_tick(struct hmb_trace_producer *p, uint64_t now)
{
	uint32_t w = load32(&p->freeze_word);

	if (HMB_TRACE_FREEZE_STATE(w) != HMB_TRACE_FREEZE_TRIGGERED ||
	    now < p->freeze_ts || now - p->freeze_ts < p->freeze_settle)
		return;
	publish_freeze(p, HMB_TRACE_FREEZE_WORD(HMB_TRACE_FREEZE_FROZEN,
						HMB_TRACE_FREEZE_REASON(w),
						HMB_TRACE_FREEZE_COUNT(w)));
}

/* Ring mode STOP counts a ring's worth of pages from each core's current one. */
static void ring_stop_restart(struct hmb_trace_producer *p)
{
	uint16_t c;

	for (c = 0; c < p->nr_cores; c++)
		p->core[c].stop_from = p->core[c].page ?
				       p->core[c].page_seq : 0;
}

uint32_t hmb_trace_freeze_rearm(struct hmb_trace_producer *p)
{
	uint32_t w = load32(&p->freeze_word);

	if (HMB_TRACE_FREEZE_STATE(w) == HMB_TRACE_FREEZE_RUNNING)
		return w;
	ring_stop_restart(p);
	/* The count stays: the host tells the next freeze from this one. */
	publish_freeze(p, HMB_TRACE_FREEZE_WORD(HMB_TRACE_FREEZE_RUNNING,
						HMB_TRACE_FREEZE_NONE,
						HMB_TRACE_FREEZE_COUNT(w)));
	return w;
}

int hmb_trace_ring_mode(struct hmb_trace_producer *p, uint32_t mode)
{
	uint32_t w = load32(&p->freeze_word);

	if (mode == HMB_CTRL_RING_STOP) {
		ring_stop_restart(p);
		p->ring_full = ring_full;
		hmb_release(); /* the hook before the word an append reads */
		*(volatile uint32_t *)&p->ring_stop_word = 1;
		return 0;
	}
	if (mode != HMB_CTRL_RING_OVERWRITE)
		return HMB_TRACE_EINVAL;
	*(volatile uint32_t *)&p->ring_stop_word = 0;
	if (HMB_TRACE_FREEZE_REASON(w) == HMB_TRACE_FREEZE_RING_FULL)
		hmb_trace_freeze_rearm(p);
	return 0;
}
