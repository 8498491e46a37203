/* csrun — untrusted bytes made safe to show on a terminal. */
#ifndef CSRUN_TERMSAFE_H
#define CSRUN_TERMSAFE_H

#include <stdbool.h>
#include <stddef.h>

/* Render S[0..LEN) for a terminal.  Printable text, '\n', '\t' and "\r\n"
 * stay byte for byte; everything a terminal would act on is shown instead:
 *   ESC and the other C0 controls as ^[ ^G ^H ... (^@ for NUL), DEL as ^?,
 *   a CR not followed by LF as ^M (a bare CR would let the text overwrite its
 *   own line),
 *   C1 controls (U+0080..U+009F) and the Unicode Bidi_Control characters
 *   (U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069: "Trojan
 *   Source" reordering) as <U+XXXX>,
 *   bytes that are not well-formed UTF-8 (a raw 0x9b C1 CSI among them) as
 *   \xNN.
 * Whatever S holds, the result has no byte below 0x20 but '\n', '\t' and the
 * CR of "\r\n", no 0x7f and no C1 or bidi control.  It keeps no state, so
 * each piece of a stream cut anywhere is safe on its own (a sequence cut in
 * two shows as \xNN bytes).  Returns a malloc'ed, NUL-terminated copy and its
 * length in *OUT_LEN (may be NULL), or NULL (errno ENOMEM). */
char *csr_termsafe (const char *s, size_t len, size_t *out_len);
/* The same for a NUL-terminated string (NULL is taken as ""). */
char *csr_termsafe_str (const char *s);
/* For JSON text (valid UTF-8, its control characters already escaped, as
 * yajl writes it): the C1 controls, DEL and the Bidi_Control characters,
 * which JSON allows raw in strings, become \uXXXX escapes, so the document
 * means the same and shows inertly on a terminal.  Anything else (invalid
 * UTF-8 included) is copied.  Malloc'ed, NUL-terminated; NULL on ENOMEM. */
char *csr_termsafe_json (const char *s, size_t len, size_t *out_len);
/* True when csr_termsafe would return S[0..LEN) unchanged. */
bool csr_termsafe_clean (const char *s, size_t len);

#endif
