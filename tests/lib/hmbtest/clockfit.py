# SPDX-License-Identifier: GPL-2.0-only
"""A clock fit's conversion of firmware time, as the module and the tools
compute it (clock/hmb_clock_fit.c, hmb_clock_to_host())."""


def to_host(fit, tick):
    """(host ns, error bound ns) of firmware time tick by a fit (a dict of
    tick_ref, host_ref, mult, tick_first, tick_last, half_gap, err_ns,
    slope_err): the line through (tick_ref, host_ref), the bound growing
    with the distance from the fit's samples; a host time before 0 is 0."""
    if tick >= fit["tick_ref"]:
        host = fit["host_ref"] + (((tick - fit["tick_ref"]) * fit["mult"]) >> 32)
    else:
        host = fit["host_ref"] - (((fit["tick_ref"] - tick) * fit["mult"]) >> 32)
    if tick < fit["tick_first"]:
        dist = fit["tick_first"] - tick
    elif tick > fit["tick_last"]:
        dist = tick - fit["tick_last"]
    else:
        dist = fit["half_gap"]
    return max(host, 0), fit["err_ns"] + ((dist * fit["slope_err"]) >> 32) + 1
