/* csrun — what csrun asks a model when local healing can't fix a snippet. */
#ifndef CSRUN_PROMPT_H
#define CSRUN_PROMPT_H

#include "classify.h"
#include "gate.h"

/* The instructions (the provider's system prompt). */
extern const char csr_prompt_system[];

/* The request: the diagnosis D (type, message, failing line, context), the
 * gate's violations when V blocked the code (V may be NULL), REJECTED (may
 * be NULL: why csrun discarded the model's previous reply in this healing
 * step), and CODE in a fence.  Nothing else about the run or the host is
 * included.  Returns a malloc'ed string, NULL on ENOMEM. */
char *csr_prompt_user (const char *code, const struct csr_diagnosis *d,
                       const struct csr_gate_verdict *v, const char *rejected);

#endif
