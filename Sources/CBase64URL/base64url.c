// Vectorised base64url decoding: 16 characters to 12 bytes per step with SSSE3 byte shuffles
// (the technique of W. Muła and D. Lemire, "Faster Base64 Encoding and Decoding Using AVX2
// Instructions", 2018, with the lookup tables redone for the URL-safe alphabet).
//
// Swift cannot express pshufb and pmaddubsw, and the scalar decoder costs about a tenth of an
// RSA-2048 verification on a typical id_token: that is why this one routine is C.
#include "CBase64URL.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

__attribute__((target("ssse3")))
static size_t decode_ssse3(const uint8_t *input, size_t input_length, uint8_t *output,
                           size_t output_capacity, int *invalid) {
    // Validity: a character is in the alphabet when lut_lo[low nibble] & lut_hi[high nibble]
    // is zero. High-nibble classes: 2 → '-', 3 → digits, 4 and 6 → letters 1..F, 5 → 'P'..'Z'
    // and '_', 7 → 'p'..'z'; every other high nibble (including bytes from 0x80 up) is bit 0x80,
    // which every lut_lo entry has set.
    const __m128i lut_hi = _mm_setr_epi8(
        (char)0x80, (char)0x80, 0x01, 0x02, 0x04, 0x08, 0x04, 0x10,
        (char)0x80, (char)0x80, (char)0x80, (char)0x80, (char)0x80, (char)0x80, (char)0x80, (char)0x80);
    // For each low nibble, the classes in which it is NOT a valid character.
    const __m128i lut_lo = _mm_setr_epi8(
        (char)(0x80 | 0x01 | 0x04),             // 0: '0' 'P' 'p' valid; '@' '`' not
        (char)(0x80 | 0x01),                    // 1
        (char)(0x80 | 0x01),                    // 2
        (char)(0x80 | 0x01),                    // 3
        (char)(0x80 | 0x01),                    // 4
        (char)(0x80 | 0x01),                    // 5
        (char)(0x80 | 0x01),                    // 6
        (char)(0x80 | 0x01),                    // 7
        (char)(0x80 | 0x01),                    // 8
        (char)(0x80 | 0x01),                    // 9
        (char)(0x80 | 0x01 | 0x02),             // A: ':' not; 'J' 'Z' 'j' 'z' valid
        (char)(0x80 | 0x01 | 0x02 | 0x08 | 0x10),  // B: only 'K' 'k'
        (char)(0x80 | 0x01 | 0x02 | 0x08 | 0x10),  // C
        (char)(0x80 | 0x02 | 0x08 | 0x10),      // D: '-' 'M' 'm'
        (char)(0x80 | 0x01 | 0x02 | 0x08 | 0x10),  // E
        (char)(0x80 | 0x01 | 0x02 | 0x10));     // F: 'O' '_' 'o'
    // What to add to a character to get its value, by high nibble; slot 0 is '_' (0x5F → 63),
    // selected explicitly because its high nibble (5) is shared with 'P'..'Z'.
    const __m128i lut_roll = _mm_setr_epi8(
        -32, 0, 17, 4, -65, -65, -71, -71, 0, 0, 0, 0, 0, 0, 0, 0);
    const __m128i nibble_mask = _mm_set1_epi8(0x0F);
    const __m128i underscore = _mm_set1_epi8(0x5F);
    const __m128i pack_pairs = _mm_set1_epi32(0x01400140);
    const __m128i pack_quads = _mm_set1_epi32(0x00011000);
    const __m128i shuffle = _mm_setr_epi8(2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1);

    __m128i errors = _mm_setzero_si128();
    size_t consumed = 0, produced = 0;
    while (consumed + 16 <= input_length && produced + 16 <= output_capacity) {
        const __m128i characters = _mm_loadu_si128((const __m128i *)(input + consumed));
        const __m128i high = _mm_and_si128(_mm_srli_epi32(characters, 4), nibble_mask);
        const __m128i low = _mm_and_si128(characters, nibble_mask);
        const __m128i classes = _mm_shuffle_epi8(lut_hi, high);
        const __m128i forbidden = _mm_shuffle_epi8(lut_lo, low);
        errors = _mm_or_si128(errors, _mm_and_si128(classes, forbidden));
        const __m128i is_underscore = _mm_cmpeq_epi8(characters, underscore);
        const __m128i roll = _mm_shuffle_epi8(lut_roll, _mm_andnot_si128(is_underscore, high));
        const __m128i values = _mm_add_epi8(characters, roll);
        // a·64 + b for each pair, then (ab)·4096 + (cd) for each pair of pairs: 24 bits per lane.
        const __m128i pairs = _mm_maddubs_epi16(values, pack_pairs);
        const __m128i quads = _mm_madd_epi16(pairs, pack_quads);
        _mm_storeu_si128((__m128i *)(output + produced), _mm_shuffle_epi8(quads, shuffle));
        consumed += 16;
        produced += 12;
    }
    *invalid = _mm_movemask_epi8(_mm_cmpeq_epi8(errors, _mm_setzero_si128())) != 0xFFFF;
    return consumed;
}

size_t authkit_base64url_decode_blocks(const uint8_t *input, size_t input_length,
                                       uint8_t *output, size_t output_capacity, int *invalid) {
    *invalid = 0;
    // Every thread computes the same answer, so a relaxed atomic is all the caching needs.
    static int has_ssse3 = -1;
    int known = __atomic_load_n(&has_ssse3, __ATOMIC_RELAXED);
    if (known < 0) {
        __builtin_cpu_init();
        known = __builtin_cpu_supports("ssse3") ? 1 : 0;
        __atomic_store_n(&has_ssse3, known, __ATOMIC_RELAXED);
    }
    if (!known) return 0;
    return decode_ssse3(input, input_length, output, output_capacity, invalid);
}

#else

size_t authkit_base64url_decode_blocks(const uint8_t *input, size_t input_length,
                                       uint8_t *output, size_t output_capacity, int *invalid) {
    (void)input; (void)input_length; (void)output; (void)output_capacity;
    *invalid = 0;
    return 0;
}

#endif
