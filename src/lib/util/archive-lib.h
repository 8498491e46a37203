/* csrun — libarchive, loaded with dlopen() on first use: only a cold rootfs
 * cache, file copies into and out of sandboxes and checkpoints need it, and
 * linking it (with libxml2, ICU, libstdc++ behind it) costs every csrun start
 * about 1.5 ms.  Works the same when the program links libarchive anyway.
 * Call csr_la_load() once, then csr_la.archive_...(). */
#ifndef CSRUN_ARCHIVE_LIB_H
#define CSRUN_ARCHIVE_LIB_H

#include <stdbool.h>

#include <archive.h>
#include <archive_entry.h>

#include "error.h"

#define CSR_LA_FUNCS(X)                                                                            \
  X (archive_entry_clear)                                                                          \
  X (archive_entry_copy_hardlink)                                                                  \
  X (archive_entry_copy_pathname)                                                                  \
  X (archive_entry_copy_stat)                                                                      \
  X (archive_entry_copy_symlink)                                                                   \
  X (archive_entry_filetype)                                                                       \
  X (archive_entry_free)                                                                           \
  X (archive_entry_gid)                                                                            \
  X (archive_entry_hardlink)                                                                       \
  X (archive_entry_hardlink_utf8)                                                                  \
  X (archive_entry_mode)                                                                           \
  X (archive_entry_mtime)                                                                          \
  X (archive_entry_mtime_nsec)                                                                     \
  X (archive_entry_new)                                                                            \
  X (archive_entry_nlink)                                                                          \
  X (archive_entry_pathname)                                                                       \
  X (archive_entry_pathname_utf8)                                                                  \
  X (archive_entry_perm)                                                                           \
  X (archive_entry_rdevmajor)                                                                      \
  X (archive_entry_rdevminor)                                                                      \
  X (archive_entry_set_filetype)                                                                   \
  X (archive_entry_set_gid)                                                                        \
  X (archive_entry_set_hardlink)                                                                   \
  X (archive_entry_set_mode)                                                                       \
  X (archive_entry_set_mtime)                                                                      \
  X (archive_entry_set_pathname)                                                                   \
  X (archive_entry_set_perm)                                                                       \
  X (archive_entry_set_rdev)                                                                       \
  X (archive_entry_set_size)                                                                       \
  X (archive_entry_set_symlink)                                                                    \
  X (archive_entry_set_uid)                                                                        \
  X (archive_entry_size)                                                                           \
  X (archive_entry_size_is_set)                                                                    \
  X (archive_entry_sparse_add_entry)                                                               \
  X (archive_entry_sparse_count)                                                                   \
  X (archive_entry_symlink)                                                                        \
  X (archive_entry_symlink_utf8)                                                                   \
  X (archive_entry_uid)                                                                            \
  X (archive_entry_xattr_add_entry)                                                                \
  X (archive_entry_xattr_count)                                                                    \
  X (archive_entry_xattr_next)                                                                     \
  X (archive_entry_xattr_reset)                                                                    \
  X (archive_errno)                                                                                \
  X (archive_error_string)                                                                         \
  X (archive_read_data)                                                                            \
  X (archive_read_data_block)                                                                      \
  X (archive_read_data_skip)                                                                       \
  X (archive_read_free)                                                                            \
  X (archive_read_new)                                                                             \
  X (archive_read_next_header)                                                                     \
  X (archive_read_open_fd)                                                                         \
  X (archive_read_open_memory)                                                                     \
  X (archive_read_support_filter_all)                                                              \
  X (archive_read_support_filter_bzip2)                                                            \
  X (archive_read_support_filter_gzip)                                                             \
  X (archive_read_support_filter_none)                                                             \
  X (archive_read_support_filter_xz)                                                               \
  X (archive_read_support_filter_zstd)                                                             \
  X (archive_read_support_format_7zip)                                                             \
  X (archive_read_support_format_ar)                                                               \
  X (archive_read_support_format_cab)                                                              \
  X (archive_read_support_format_cpio)                                                             \
  X (archive_read_support_format_empty)                                                            \
  X (archive_read_support_format_iso9660)                                                          \
  X (archive_read_support_format_lha)                                                              \
  X (archive_read_support_format_rar)                                                              \
  X (archive_read_support_format_rar5)                                                             \
  X (archive_read_support_format_tar)                                                              \
  X (archive_read_support_format_warc)                                                             \
  X (archive_read_support_format_xar)                                                              \
  X (archive_read_support_format_zip)                                                              \
  X (archive_write_add_filter_none)                                                                \
  X (archive_write_add_filter_zstd)                                                                \
  X (archive_write_close)                                                                          \
  X (archive_write_data)                                                                           \
  X (archive_write_data_block)                                                                     \
  X (archive_write_disk_new)                                                                       \
  X (archive_write_disk_set_options)                                                               \
  X (archive_write_finish_entry)                                                                   \
  X (archive_write_free)                                                                           \
  X (archive_write_header)                                                                         \
  X (archive_write_new)                                                                            \
  X (archive_write_open)                                                                           \
  X (archive_write_open_fd)                                                                        \
  X (archive_write_set_bytes_in_last_block)                                                        \
  X (archive_write_set_bytes_per_block)                                                            \
  X (archive_write_set_filter_option)                                                              \
  X (archive_write_set_format_option)                                                              \
  X (archive_write_set_format_pax)                                                                 \
  X (archive_write_set_format_pax_restricted)                                                      \
  X (archive_write_set_format_ustar)

#define CSR_LA_FIELD(f) __typeof__ (f) *f;
struct csr_la
{
  bool loaded;
  CSR_LA_FUNCS (CSR_LA_FIELD)
};
#undef CSR_LA_FIELD

extern struct csr_la csr_la;

/* Load libarchive (once; later calls return 0 at once). */
int csr_la_load (csr_error **err);

/* Free *A (a read or a write handle) if set: for cleanup attributes. */
void csr_la_read_freep (struct archive **a);
void csr_la_write_freep (struct archive **a);
#define cleanup_la_read __attribute__ ((cleanup (csr_la_read_freep)))
#define cleanup_la_write __attribute__ ((cleanup (csr_la_write_freep)))

#endif
