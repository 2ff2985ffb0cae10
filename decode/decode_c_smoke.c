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
	return 0;
}
