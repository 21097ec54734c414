"""Tables and figures of the P2 lecture (docs/p2/, snippets/p2/), one module per companion script.

==========================  ==========================================  =========================
module                      companion script                            pages
==========================  ==========================================  =========================
``programming_model``       ``01_cuda_programming_model.py``            index, programming-model
``memory``                  ``02_memory_coalescing.py``                 memory
``shared_memory``           ``03_shared_memory_sync_reduction.py``      shared-memory
``occupancy``               ``04_occupancy_latency_waves.py``           occupancy, exercises
``overhead``                ``05_amdahl_and_launch_overhead.py``        index, occupancy
==========================  ==========================================  =========================

A script imports its module as ``lecture`` and the visible code of a page calls it
(``show(lecture.bias_table(...))``); the page shows each helper's source folded, through
the ``--8<--`` section markers. Labels are written in English; their Chinese is in the
``p2`` catalog (``locale/zh/LC_MESSAGES/p2.po``).
"""
