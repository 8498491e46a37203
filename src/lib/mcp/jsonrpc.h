/* csrun — JSON-RPC 2.0 over a byte stream, one message per line (the MCP
 * stdio transport): splitting the input into bounded lines, checking a
 * line's envelope, and building the lines to send (results, errors,
 * notifications) and queueing them for a writer that never blocks on a
 * slow reader.  Nothing here knows MCP's methods (server.c does). */
#ifndef CSRUN_MCP_JSONRPC_H
#define CSRUN_MCP_JSONRPC_H

#include <stdbool.h>
#include <stddef.h>
#include <yajl/yajl_tree.h>

#include "../util/error.h"

/* JSON-RPC's error codes. */
enum
{
  CSR_RPC_PARSE_ERROR = -32700,
  CSR_RPC_INVALID_REQUEST = -32600,
  CSR_RPC_METHOD_NOT_FOUND = -32601,
  CSR_RPC_INVALID_PARAMS = -32602,
  CSR_RPC_INTERNAL_ERROR = -32603,
};

/* ------------------------------------------------------------ lines in */

/* The lines of a stream, each at most MAX bytes (the newline excluded; a
 * "\r" before it is dropped).  A longer line is reported once as too long
 * and skipped up to its newline, never kept whole. */
struct csr_rpc_reader
{
  char *buf;
  size_t len, cap, max;
  size_t scan;   /* bytes of buf already searched for a newline */
  bool skipping; /* inside a line that was too long */
  char *line;    /* the line returned last */
  size_t line_cap;
};

void csr_rpc_reader_init (struct csr_rpc_reader *r, size_t max);
void csr_rpc_reader_release (struct csr_rpc_reader *r);
/* Append what was read (LEN bytes); -1 with ENOMEM. */
int csr_rpc_reader_feed (struct csr_rpc_reader *r, const char *data, size_t len);
/* The next complete line: 1 with *LINE (NUL-terminated, valid until the next
 * call) and *LEN; 2 when a line longer than MAX began (reported once; its
 * bytes are dropped); 0 when no complete line is buffered. */
int csr_rpc_reader_next (struct csr_rpc_reader *r, char **line, size_t *len);
/* At end of input: the unterminated last line, if any (as _next). */
int csr_rpc_reader_last (struct csr_rpc_reader *r, char **line, size_t *len);

/* ------------------------------------------------------------ one message */

enum csr_rpc_kind
{
  CSR_RPC_REQUEST,      /* method and id */
  CSR_RPC_NOTIFICATION, /* method, no id */
  CSR_RPC_RESPONSE,     /* result or error, and an id: a reply to us */
  CSR_RPC_INVALID,      /* error_code and error_message say why; id if one could be read */
};

struct csr_rpc_msg
{
  enum csr_rpc_kind kind;
  yajl_val tree;      /* the whole document (owned) */
  const char *method; /* in TREE */
  yajl_val params;    /* an object, or NULL */
  char *id;           /* the id as JSON text ("7", "\"a\""), or NULL */
  int error_code;
  char error_message[512];
};

/* Parse and check one line: the JSON itself (-32700: not JSON, NUL bytes,
 * comments, nesting deeper than CSR_JSON_MAX_DEPTH, not UTF-8), then the
 * envelope (-32600: not an object, a batch array, jsonrpc not "2.0", an id
 * that is not a string or an integer, a method that is not a string, params
 * that are not an object, duplicate keys).  Never fails: an invalid line is
 * a message of kind CSR_RPC_INVALID.  Release with csr_rpc_msg_release. */
void csr_rpc_parse (const char *line, size_t len, struct csr_rpc_msg *m);
void csr_rpc_msg_release (struct csr_rpc_msg *m);

/* ------------------------------------------------------------ lines out */

/* {"jsonrpc":"2.0","id":ID,"result":RESULT}\n where RESULT is JSON text.
 * NULL on ENOMEM. */
char *csr_rpc_result_line (const char *id, const char *result, size_t *len);
/* {"jsonrpc":"2.0","id":ID|null,"error":{"code":CODE,"message":MESSAGE}}\n */
char *csr_rpc_error_line (const char *id, int code, const char *message, size_t *len);
/* {"jsonrpc":"2.0","method":METHOD,"params":PARAMS}\n (PARAMS is JSON text). */
char *csr_rpc_notification_line (const char *method, const char *params, size_t *len);

/* A queue of lines for a writer: written in pieces of at most 4096 bytes
 * when the descriptor is writable (poll POLLOUT), so that a blocking pipe
 * never blocks the server on a reader that is slow to read. */
struct csr_rpc_outq
{
  struct csr_rpc_chunk *first, *last;
  size_t pending; /* bytes queued */
};
/* Take LINE (malloc'ed, LEN bytes) into the queue; -1 with ENOMEM (LINE
 * is freed: it is lost). */
int csr_rpc_outq_push (struct csr_rpc_outq *q, char *line, size_t len);
/* Write one piece to FD: 0, or -1 with errno (EPIPE: the reader is gone). */
int csr_rpc_outq_write (struct csr_rpc_outq *q, int fd);
void csr_rpc_outq_release (struct csr_rpc_outq *q);

#endif
