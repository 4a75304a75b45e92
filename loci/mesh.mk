# SPDX-License-Identifier: MIT
# Slow Loci-mesh targets (issue 6), kept out of `make test`. Included by the top Makefile.
#   make bench-loci                  mesh costs under QEMU -icount (loci/README.md table)
#   make bench-repl                  REPL latency beside the hostile colony under resume()
#                                    (plain TCG; loci/README.md, "The REPL beside them")
#   make bench-inspect               bytes show() writes per colony flavour, and their time
#                                    at 115200 baud (loci/README.md, "Inspecting the field")
#   make colony NAME=foraging SEEDS=1-30 OPTS="pheromone=False"
#                                    one colony over many seeds, summarised
#                                    (ICOUNT=1: under -icount, for per-guest-second figures)
#   make colony-bridge SEEDS=1-100   the same, named in the target
#   make colonies                    every colony's report at the seed counts of loci/README.md

NAME ?= foraging
SEEDS ?= 1
OPTS ?=

.PHONY: bench-loci bench-repl bench-inspect colony colonies

bench-loci: build
	@$(PY) tools/bench/bench_loci.py

bench-repl: build
	@$(PY) tools/bench/bench_repl.py

bench-inspect: build
	@$(PY) tools/bench/bench_inspect.py

colony: build
	@$(PY) tools/field/loci_run.py $(NAME) --seeds $(SEEDS) $(foreach o,$(OPTS),--opt $(o)) $(if $(ICOUNT),--icount)

# make colony-bridge SEEDS=1-100: the same, the colony named in the target
colony-%: build
	@$(PY) tools/field/loci_run.py $* --seeds $(SEEDS) $(foreach o,$(OPTS),--opt $(o)) $(if $(ICOUNT),--icount)

colonies: build
	@$(PY) tools/field/loci_run.py foraging --seeds 1-30
	@$(PY) tools/field/loci_run.py foraging --seeds 1-30 --opt pheromone=False
	@$(PY) tools/field/loci_run.py bridge --seeds 1-100
	@$(PY) tools/field/loci_run.py bridge --seeds 1-100 --opt late=True
	@$(PY) tools/field/loci_run.py tasks --seeds 1-10
	@$(PY) tools/field/loci_run.py healing --seeds 1-10
	@$(PY) tools/field/loci_run.py hostile --seeds 1-3 --icount
