/* SPDX-License-Identifier: Apache-2.0 */
/*
 * header_cxx.cc - pdfstamp.h as a C++ program sees it: tests/header_c99.c
 * (every *_INIT macro as an initialiser, a few calls), compiled by the C++
 * compiler with -pedantic -Werror -Wall -Wextra (Makefile.am) and linked
 * against the shared library: the header must give its functions C
 * linkage (extern "C") for the program to link.
 */
#include "header_c99.c"
