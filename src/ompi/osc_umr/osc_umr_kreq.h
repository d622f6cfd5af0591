/*
 * Copyright (c) 2026, The mlx5_umr developers
 * SPDX-License-Identifier: BSD-3-Clause
 */
/**
 * osc/umr, target side of the key protocol (osc_umr_wire.h): a key request
 * taken from the window's receive is answered with the packed rkey of a
 * layout key over the window memory (umr_mpi_keys.h), or with an error
 * status.
 *
 * A request whose datatype description was sent apart
 * (MCA_OSC_UMR_KREQ_DESC_APART) waits in w->treqs while that description
 * is received from its origin (MCA_OSC_UMR_TAG_KDESC); so does every later
 * request of the same origin, because an origin matches answers in the
 * order of its requests. A request of an origin with nothing waiting is
 * answered at once, as before descriptions could come apart. A
 * description that names another request, or does not come whole, refuses
 * that request and every later description of that origin (its short
 * requests still work): never a wrong key, never a hang. A target that
 * cannot post its receive of requests again retires until the window's
 * free, where it receives and refuses what came meanwhile.
 */
#ifndef MCA_OSC_UMR_KREQ_H_
#define MCA_OSC_UMR_KREQ_H_

#include "osc_umr_win.h"

BEGIN_C_DECLS

#define MCA_OSC_UMR_KREQ_HDR offsetof(mca_osc_umr_kreq_t, data)

/* A request of `len` bytes from `src` is in w->kreq: answer it, or queue
 * it (w->kreq is reused at once). */
void mca_osc_umr_kreq_take(mca_osc_umr_win_t *w, int src, size_t len);

/* Answer the queued requests whose turn it is and whose description is in
 * (from progress, while w->treqs is not empty). */
void mca_osc_umr_kreq_progress(mca_osc_umr_win_t *w);

/* The receive of key requests could not be posted again after one came
 * (progress): the window's target side retires. Its origins are not told
 * (nothing of theirs listens for it): their later keys stay pending and
 * their operations go through the wrapped module. */
void mca_osc_umr_kreq_retire(mca_osc_umr_win_t *w);

/* A retired target at the window's free, once every origin has said how
 * many requests it sent here (`expect`, per origin): the requests never
 * received are received now, from each origin, and refused (their
 * descriptions apart drained). If that cannot be posted either, they stay
 * unmatched and the private communicator is kept, never freed: its
 * context id is not reused, so no later communicator takes them; their
 * origins refuse those keys (key_unanswered). */
void mca_osc_umr_kreq_drain(mca_osc_umr_win_t *w, const int *expect);

/* The window goes: drop what is queued (receives cancelled). */
void mca_osc_umr_kreq_fini(mca_osc_umr_win_t *w);

END_C_DECLS

#endif
