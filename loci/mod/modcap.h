// SPDX-License-Identifier: MIT
// What the other bindings of loci/mod may ask of `_cap` without a trip through Python:
// one capability check (the mesh's ctx.sense and ctx.deposit make one per use), and a
// grant (the mesh's spawn).
#ifndef LOCIOS_LOCI_MOD_MODCAP_H
#define LOCIOS_LOCI_MOD_MODCAP_H

#include "py/obj.h"

#include "cap.h"

// cap_check of `cap` (a Cap) in `table` (a Table) for `owner`, as Table.check does it:
// the code (0 = allowed); TypeError if either object is not of its type, and the
// CapError of a malformed request.
int modcap_check(mp_obj_t table, mp_obj_t cap, uint32_t owner, const cap_req_t *req);

// Table.audit_count(): the records in the log.
size_t modcap_audit_count(mp_obj_t table);

// Table.grant(owner, rights, flavours, region, keys, rate, expires, io, mem, by) with
// every argument given: the new Cap, or the CapError (or TypeError) it raises.
mp_obj_t modcap_grant(mp_obj_t table, mp_obj_t owner, mp_obj_t rights, mp_obj_t flavours,
                      mp_obj_t region, mp_obj_t keys, mp_obj_t rate, mp_obj_t expires, mp_obj_t io,
                      mp_obj_t mem, mp_obj_t by);

#endif
