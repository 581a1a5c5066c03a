#ifndef REGISTER_PROBE_H
#define REGISTER_PROBE_H

/// Fills every vector register with the 64 bytes at `canary`, clears them with `coffer_clear_vector_registers` when
/// `clear` is non-zero, then starts a thread whose first act is to save the registers it began with (XSAVE). Returns
/// how many of those registers' 16-byte lanes hold the canary's first 16 bytes, or -1 where this cannot be checked
/// (not x86-64 with AVX).
int register_probe_inherited(const unsigned char *canary, int clear);

#endif
