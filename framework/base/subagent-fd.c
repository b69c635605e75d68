/* subagent-fd.c: whole writes to a file descriptor.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <unistd.h>

#include "subagent-fd-private.h"

int
_subagent_write_all (int         fd,
                     const void *data,
                     gsize       len)
{
  const char *p = data;

  while (len > 0)
    {
      gssize n = write (fd, p, len);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return errno;
      p += n;
      len -= (gsize) n;
    }
  return 0;
}
