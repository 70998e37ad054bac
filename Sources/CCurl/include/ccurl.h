#ifndef AUTHKIT_CCURL_H
#define AUTHKIT_CCURL_H
/* libcurl, loaded on first use: see ccurl.c. */
#endif
