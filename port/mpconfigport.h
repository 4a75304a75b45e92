// SPDX-License-Identifier: MIT
// MicroPython configuration for LociOS: the VM's feature set and every port tunable.
// Defaults live in py/mpconfig.h; this file only states where LociOS differs.
#ifndef LOCIOS_PORT_MPCONFIGPORT_H
#define LOCIOS_PORT_MPCONFIGPORT_H

#include <stdint.h>
#include <stddef.h>
#include <alloca.h>

// ---- Tunables ---------------------------------------------------------------------------
// GC heap: this share of the free frames at boot, clamped to [floor, ceiling]. Below
// the floor the port says how much RAM it needs and powers off.
#define LOCIOS_HEAP_PERCENT           (75)
#define LOCIOS_HEAP_FLOOR             (8u * 1024 * 1024)
#define LOCIOS_HEAP_CEILING           (1024u * 1024 * 1024)
// Bytes kept free at the bottom of the C stack when the VM's stack check fires, for the
// frames between two checks and for the interrupt handlers that run on this stack.
#define MICROPY_STACK_CHECK_MARGIN    (16 * 1024)
// Raw-REPL input buffered at once (matches the raw-paste window a host may fill).
#define MICROPY_REPL_STDIN_BUFFER_MAX (256)

// ---- Feature level ----------------------------------------------------------------------
#define MICROPY_CONFIG_ROM_LEVEL (MICROPY_CONFIG_ROM_LEVEL_EXTRA_FEATURES)

#define MICROPY_HW_BOARD_NAME   "LociOS"
#define MICROPY_HW_MCU_NAME     "x86_64"
#define MICROPY_PY_SYS_PLATFORM "lociOS"
#define LOCIOS_VERSION_STRING   "0.1"

// Object model and numbers: 64-bit words, arbitrary-precision ints, IEEE doubles.
#define MICROPY_OBJ_REPR            (MICROPY_OBJ_REPR_A)
#define MICROPY_LONGINT_IMPL        (MICROPY_LONGINT_IMPL_MPZ)
#define MICROPY_FLOAT_IMPL          (MICROPY_FLOAT_IMPL_DOUBLE)
#define MICROPY_USE_INTERNAL_ERRNO  (1)
#define MICROPY_USE_INTERNAL_PRINTF (1)

// Compiler, REPL and the native code emitter.
#define MICROPY_ENABLE_COMPILER   (1)
#define MICROPY_EMIT_X64          (1)
#define MICROPY_REPL_INFO         (1)
#define MICROPY_HELPER_REPL       (1)
#define MICROPY_REPL_AUTO_INDENT  (1)
#define MICROPY_KBD_EXCEPTION     (1)
#define MICROPY_ENABLE_SCHEDULER  (1)
#define MICROPY_SCHEDULER_DEPTH   (8)
#define MICROPY_OPT_COMPUTED_GOTO (1)
#define MICROPY_ERROR_REPORTING   (MICROPY_ERROR_REPORTING_DETAILED)
#define MICROPY_WARNINGS          (1)

// Memory: GC with finalisers, roots found by shared/runtime/gchelper_generic.c.
#define MICROPY_ENABLE_GC                      (1)
#define MICROPY_ENABLE_FINALISER               (1)
#define MICROPY_STACK_CHECK                    (1)
#define MICROPY_GCREGS_SETJMP                  (0)
#define MICROPY_ALLOC_PATH_MAX                 (256)
// micropython.mem_total/mem_current/mem_peak: allocation statistics for Python.
#define MICROPY_MEM_STATS                      (1)
#define MICROPY_MALLOC_USES_ALLOCATED_SIZE     (1)
// Lets an exception raised while the heap is locked or full still carry a traceback.
#define MICROPY_ENABLE_EMERGENCY_EXCEPTION_BUF (1)
#define MICROPY_EMERGENCY_EXCEPTION_BUF_SIZE   (256)
#define MICROPY_ALLOC_PARSE_CHUNK_INIT         (64)

// Frozen modules (port/modules, listed in port/manifest.py). The port builds
// frozen_content.c itself, so these stand in for what py/mkrules.mk would add.
#define MICROPY_MODULE_FROZEN_MPY      (1)
#define MICROPY_QSTR_EXTRA_POOL        mp_qstr_frozen_const_pool
#define MICROPY_ENABLE_EXTERNAL_IMPORT (1)
// No disk filesystem yet, but the VFS layer is there so Python code can mount its own
// (`vfs.mount(obj, '/x')`, as MicroPython's test runner does for --via-mpy), and .mpy
// files load from it: bytecode, and native code relocated into the executable arena
// (mp_port_commit_exec).
#define MICROPY_VFS                    (1)
#define MICROPY_READER_VFS             (1)
// The sources of the frozen modules, a ROM filesystem in the image (port/romfs.c),
// mounted read-only at /rom by mp_init (py/runtime.c), which also appends /rom and
// /rom/lib to sys.path (every module there is frozen too, and found frozen first).
#define MICROPY_VFS_ROM                (1)
// FAT and littlefs (enabled in port/Makefile) work on any block device object, e.g. a
// RAM disk written in Python, until LociOS has a disk driver. FAT as the unix port has
// it: long names (code page 437), a current directory per volume, 4 KiB sectors.
#define MICROPY_FATFS_ENABLE_LFN       (1)
#define MICROPY_FATFS_RPATH            (2)
#define MICROPY_FATFS_MAX_SS           (4096)
#define MICROPY_FATFS_LFN_CODE_PAGE    437
#define MICROPY_PERSISTENT_CODE_LOAD   (1)

// Builtins and modules beyond the EXTRA_FEATURES level.
#define MICROPY_PY_BUILTINS_HELP_TEXT lociOS_help_text
extern const char lociOS_help_text[];
#define MICROPY_PY_SYS_STDFILES           (1)
#define MICROPY_PY_SYS_EXC_INFO           (1)
#define MICROPY_PY_SYS_MAXSIZE            (1)
#define MICROPY_PY_MICROPYTHON_MEM_INFO   (1)
#define MICROPY_PY_MATH_SPECIAL_FUNCTIONS (1)
#define MICROPY_PY_RANDOM_SEED_INIT_FUNC  (mp_hal_random_seed())
uint32_t mp_hal_random_seed(void);
#define MICROPY_PY_RANDOM_EXTRA_FUNCS  (1)
#define MICROPY_PY_OS                  (1)
#define MICROPY_PY_OS_UNAME            (1)
#define MICROPY_PY_OS_URANDOM          (0)
#define MICROPY_PY_PLATFORM            (1)
#define MICROPY_PY_IO                  (1)
#define MICROPY_PY_TIME                (1)
#define MICROPY_PY_TIME_TIME_TIME_NS   (1)
#define MICROPY_PY_TIME_CUSTOM_SLEEP   (1)
#define MICROPY_PY_TIME_INCLUDEFILE    "modtime_port.c"
#define MICROPY_PY_MACHINE             (1)
// machine.mem8/16/32/64 are the port's own (port/memfault.c): a bad address raises
// OSError(EFAULT) instead of faulting the kernel.
#define MICROPY_PY_MACHINE_MEMX        (0)
// machine.PinBase, so Python classes can act as pins (and machine.Signal wrap them).
#define MICROPY_PY_MACHINE_PIN_BASE    (1)
#define MICROPY_PY_MACHINE_INCLUDEFILE "modmachine_port.c"
#define MICROPY_PY_MACHINE_EXTRA_GLOBALS                                  \
    { MP_ROM_QSTR(MP_QSTR_reset), MP_ROM_PTR(&machine_hard_reset_obj) },  \
        { MP_ROM_QSTR(MP_QSTR_freq), MP_ROM_PTR(&machine_tsc_freq_obj) }, \
        { MP_ROM_QSTR(MP_QSTR_port8), MP_ROM_PTR(&machine_port8_obj) },   \
        { MP_ROM_QSTR(MP_QSTR_port16), MP_ROM_PTR(&machine_port16_obj) }, \
        { MP_ROM_QSTR(MP_QSTR_port32), MP_ROM_PTR(&machine_port32_obj) }, \
        { MP_ROM_QSTR(MP_QSTR_mem8), MP_ROM_PTR(&port_mem8_obj) },        \
        { MP_ROM_QSTR(MP_QSTR_mem16), MP_ROM_PTR(&port_mem16_obj) },      \
        { MP_ROM_QSTR(MP_QSTR_mem32), MP_ROM_PTR(&port_mem32_obj) },      \
        { MP_ROM_QSTR(MP_QSTR_mem64), MP_ROM_PTR(&port_mem64_obj) },

// Code objects that carry their module context (MICROPY_PY_BUILTINS_CODE_BASIC), so
// exec(code, globals) gives each Locus fresh functions bound to its own globals dict;
// the minimal layout rebinds the one shared context instead (loci/python/mesh.py).
#define MICROPY_PY_FUNCTION_ATTRS_CODE (1)

// Call frames up to 64 words live on the C stack (1 MiB, kernel/config.h) instead of a
// heap block allocated and freed on every call (vm/patches/0005; MicroPython's default
// is 11 words, sized for small microcontroller stacks). Deep recursion still ends in
// RecursionError through MICROPY_STACK_CHECK, a little sooner.
#define MICROPY_VM_MAX_STATE_ON_STACK (sizeof(mp_uint_t) * 64)

// ---- The VM (vm/): its tunables here, its hooks in vm/vm_hooks.h --------------------------
// Budgeted calls (vm/budget, the `_budget` module) are stopped through the VM abort point
// (nlr_set_abort/nlr_jump_abort), which Python try/except/finally cannot catch.
// LOCIOS_BUDGET_HOOKS=0 compiles the VM's charges out (only to measure their cost:
// `_budget` then counts nothing); LOCIOS_C_LOOP_POLL=0 only the polls in long C loops
// (vm/patches/0014), to measure theirs.
#define MICROPY_ENABLE_VM_ABORT (1)
#ifndef LOCIOS_BUDGET_HOOKS
#define LOCIOS_BUDGET_HOOKS (1)
#endif
#ifndef LOCIOS_C_LOOP_POLL
#define LOCIOS_C_LOOP_POLL (1)
#endif

// The profiler (vm/profile, the `_prof` module): vm/patches/0006 publishes the running
// bytecode frame (prof_top, a chain of links on the C stack) for the timer sampler, and
// counts calls and back edges per function in a table of LOCIOS_PROF_SLOTS (power of two;
// LOCIOS_PROF_PROBES probes) keyed by bytecode. Back edges are counted in the frame's
// link and added to the table when the frame leaves, or when the counters are read
// (prof_settle). A function's first hot event is at LOCIOS_PROF_HOT_FIRST calls + back
// edges; each doubles the next. The sample ring holds LOCIOS_PROF_RING (power of two)
// samples. LOCIOS_PROF_COUNTERS=0 compiles the counters out (only to measure their cost);
// LOCIOS_PROF=0 the whole VM side (`make bench-vm-prof` builds its reference image so).
#ifndef LOCIOS_PROF
#define LOCIOS_PROF (1)
#endif
#ifndef LOCIOS_PROF_COUNTERS
#define LOCIOS_PROF_COUNTERS (LOCIOS_PROF)
#endif
#define LOCIOS_PROF_SLOTS     (512)
#define LOCIOS_PROF_PROBES    (8)
#define LOCIOS_PROF_HOT_FIRST (1024)
#define LOCIOS_PROF_RING      (8192)
// The profiler's counting fast paths for this CPU (vm/profile/prof_vm.h says what they do).
#define LOCIOS_PROF_ARCH_H    "prof_vmx64.h"

// Native promotion (vm/opt): native code polls at every loop back edge (budgets, Ctrl-C
// and VM aborts stop it as they stop bytecode; vm/patches/0008) and does small-int
// + - * & | ^ and comparisons inline (vm/patches/0009).
#define MICROPY_EMIT_NATIVE_POLL        (1)
#define MICROPY_EMIT_X64_SMALL_INT_FAST (1)

// Interning and finding a string: a hash index over every qstr (vm/patches/0019)
// instead of a scan of each unsorted pool, which grows with every name a session compiles.
#define MICROPY_QSTR_HASH_INDEX (1)

// This is the image: all of vm/ is built in, with its soft-reset list and lexer hook.
#define LOCIOS_VM_IMAGE (1)
#include "vm_hooks.h"

// ---- The REPL's idle hook ----------------------------------------------------------------
// kernel.idle(fn): port/mphalport.c calls fn while the friendly REPL waits for input.
// A soft reset must forget fn (it lived on the old heap).
void mp_hal_idle_reset(void);
#define MICROPY_PORT_INIT_FUNC mp_hal_idle_reset()

// ---- Machine-code placement -------------------------------------------------------------
// Native and viper code is assembled on the GC heap, then committed into the kernel's
// executable arena (W^X): see mp_port_commit_exec in mphalport.c.
#define MP_PLAT_COMMIT_EXEC(buf, len, reloc) mp_port_commit_exec((buf), (len), (reloc))
void *mp_port_commit_exec(void *buf, size_t len, void *reloc);

// ---- Types ------------------------------------------------------------------------------
typedef intptr_t mp_int_t;
typedef uintptr_t mp_uint_t;
typedef long mp_off_t;
#define MP_SSIZE_MAX                     (0x7fffffffffffffffL)
#define UINT_FMT                         "%lu"
#define INT_FMT                          "%ld"
#define MICROPY_MAKE_POINTER_CALLABLE(p) ((void *)(p))
#define MP_STATE_PORT                    MP_STATE_VM

#endif
