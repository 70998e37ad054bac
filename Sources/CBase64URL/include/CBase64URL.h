#ifndef AUTHKIT_CBASE64URL_H
#define AUTHKIT_CBASE64URL_H
#include <stddef.h>
#include <stdint.h>

/// Decodes the longest prefix of `input` that is a multiple of 16 characters and whose
/// 12-byte blocks fit `output` with 4 bytes to spare (each block is written with a 16-byte
/// store), using SSSE3 when the CPU has it. Returns the number of characters consumed (0 when
/// SSSE3 is unavailable or the input is short); sets `*invalid` to non-zero when any consumed
/// character is outside the base64url alphabet. The caller decodes the rest.
size_t authkit_base64url_decode_blocks(const uint8_t *input, size_t input_length,
                                       uint8_t *output, size_t output_capacity, int *invalid);

#endif
