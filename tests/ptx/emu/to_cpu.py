#!/usr/bin/env python3
"""tests/ptx/emu/to_cpu.py IN.ll OUT.ll: the LLVM IR of a GPU kernel
(blkc --emit=llvm) made into IR that a CPU runs, for tests/ptx/emu/run.sh.

The kernel's global accesses, inline PTX (ld.global / st.global, predicated
stores), become plain loads and stores (or calls to emu_st32 / emu_st64
for the predicated ones), a histogram's red.shared.add and a predicated
st.shared calls to emu_red_add1 and emu_sst32, the scratch addresses'
opaque copy (mov.b32) the value itself; the thread index, the butterfly shuffle and the
barrier become calls to emu_tid, emu_shfl and emu_bar, which the harness
defines over threads. The target lines go (the host's are used). Any other
inline PTX is refused: the kernel cannot be run this way."""
import re
import sys

src = open(sys.argv[1]).read()
ptr = r'(ptr addrspace\(1\) %\d+)'
for bits, reg in ((8, 'h'), (16, 'h'), (32, 'r'), (64, 'l')):
    src = re.sub(r'call i%d asm sideeffect "ld\.global\.b%d \{\$0\}, \[\$1\];", "=&%s,l"\(%s\)' % (bits, bits, reg, ptr),
                 r'load volatile i%d, \1' % bits, src)
    src = re.sub(r'call void asm sideeffect "st\.global\.b%d \[\$0\], \{\$1\};", "l,%s"\(%s, (i%d %%\d+)\)'
                 % (bits, reg, ptr, bits), r'store volatile \2, \1', src)
    if bits >= 32:
        pred = 'call void asm sideeffect "@$1 st.global.b%d [$0], {$2};", "l,b,%s"(' % (bits, reg)
        if pred in src:
            src = src.replace(pred, 'call void @emu_st%d(' % bits)
            src += '\ndeclare void @emu_st%d(ptr addrspace(1), i1, i%d)\n' % (bits, bits)
# a histogram's count (lower/histogram.c) and a predicated shared store
for text, fn, decl in (('"@$0 red.shared.add.u32 [$1], 1;", "b,l,~{memory}"', 'emu_red_add1',
                        '(i1, ptr addrspace(3))'),
                       ('"@$0 st.shared.b32 [$1], $2;", "b,l,r"', 'emu_sst32', '(i1, ptr addrspace(3), i32)')):
    if 'call void asm sideeffect ' + text + '(' in src:
        src = src.replace('call void asm sideeffect ' + text + '(', 'call void @%s(' % fn)
        src += '\ndeclare void @%s%s\n' % (fn, decl)
# the scratch addresses' opaque copy of their thread part (lower/convert.c opaque_i32): the value itself
src = re.sub(r'call i32 asm sideeffect "mov\.b32 \$0, \$1;", "=r,r"\((i32 [^)]+)\)', r'add \1, 0', src)
left = re.search(r'asm sideeffect "[^"]*"', src)
if left:
    sys.exit("to_cpu.py: inline PTX not handled: " + left.group(0))
for gpu, cpu in (('llvm.nvvm.read.ptx.sreg.tid.x', 'emu_tid'), ('llvm.nvvm.shfl.sync.bfly.i32', 'emu_shfl'),
                 ('llvm.nvvm.barrier0', 'emu_bar')):
    src = src.replace('@' + gpu, '@' + cpu)
src = re.sub(r'^target (datalayout|triple).*$', '', src, flags=re.M)
open(sys.argv[2], 'w').write(src)
