/* kd_api.h - KD_API marks the functions of the user tier (the headers directly in
 * include/kdistill/): the only symbols the shared library libkdistill.so exports (the library is
 * compiled with -fvisibility=hidden). The author tier (include/kdistill/author/) is for code built
 * into the library or linked with the static libkdistill.a; its functions are not exported by
 * libkdistill.so. */
#ifndef KDISTILL_KD_API_H
#define KDISTILL_KD_API_H

#if defined(__GNUC__)
#define KD_API __attribute__((visibility("default")))
#else
#define KD_API
#endif

#endif
