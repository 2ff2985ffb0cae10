// SPDX-License-Identifier: GPL-2.0-only
/*
 * Compiled as C so that decode_c.h stays usable from the C plugin: a C++-ism
 * in the header breaks this build, not the plugin's.
 */
#include "decode_c.h"

#include <stdio.h>
#include <string.h>

int main(void)
{
	static const unsigned char junk[4] = { 'H', 'M', 'B', 'D' };
	char err[128] = "";
	struct hmb_dict *dict = hmb_dict_parse(junk, sizeof(junk), err,
					       sizeof(err));

	if (dict || !strstr(err, "shorter than its 16-byte header")) {
		fprintf(stderr, "unexpected: dict=%p err='%s'\n", (void *)dict,
			err);
		hmb_dict_free(dict);
		return 1;
	}
	if (hmb_dict_format(NULL, 1, NULL, 0, NULL, 0) != -1 ||
	    hmb_dict_event_name(NULL, 1) != NULL)
		return 1;
	{
		struct hmb_clock_set *clocks = hmb_clock_set_alloc();
		struct hmb_clock_fit fit = { 0 };
		char text[128];
		int ok;

		if (!clocks)
			return 1;
		ok = hmb_clock_set_add_fit(clocks, 0, 1, &fit, 0,
					   HMB_TRACE_CLOCK_LOCAL, text,
					   sizeof(text)) ==
			     HMB_CLOCK_SET_REFUSED &&
		     hmb_clock_set_record_time(clocks, 0, 1, 5, text,
					       sizeof(text)) == 0 &&
		     strcmp(text, "fw_time=? (no clock fit)") == 0 &&
		     hmb_dict_set_generation(NULL, 0, 0) == 0;
		hmb_clock_set_free(clocks);
		if (!ok) {
			fprintf(stderr, "unexpected: '%s'\n", text);
			return 1;
		}
	}
	return 0;
}
