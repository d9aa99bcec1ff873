# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_latlab_global_optspecs
    string join \n h/help V/version
end

function __fish_latlab_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_latlab_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_latlab_using_subcommand
    set -l cmd (__fish_latlab_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c latlab -n "__fish_latlab_needs_command" -s h -l help -d 'Print help'
complete -c latlab -n "__fish_latlab_needs_command" -s V -l version -d 'Print version'
complete -c latlab -n "__fish_latlab_needs_command" -f -a "run" -d 'Measure wake-up latency and period accuracy of periodic real-time threads'
complete -c latlab -n "__fish_latlab_needs_command" -f -a "dump" -d 'Print the events of a trace one per line, like `trace-cmd report`'
complete -c latlab -n "__fish_latlab_needs_command" -f -a "explain" -d 'Name why a periodic timer task woke up late, from a kernel trace (the KTAS analysis)'
complete -c latlab -n "__fish_latlab_needs_command" -f -a "load" -d 'Run a background load (cpu, io, net, udp, mem, syscall, ipc, a command) alone and report its throughput'
complete -c latlab -n "__fish_latlab_needs_command" -f -a "lockbench" -d 'Compare delayed locking with plain, PI and ceiling locks (real threads, or --simulate)'
complete -c latlab -n "__fish_latlab_needs_command" -f -a "record" -d 'Capture kernel events (tracefs) into a trace-cmd .dat file'
complete -c latlab -n "__fish_latlab_needs_command" -f -a "report" -d 'Write results as one self-contained HTML report with plots; several results are compared'
complete -c latlab -n "__fish_latlab_needs_command" -f -a "history" -d 'List, filter or delete the results kept in the history database (every saved `run`, `respond`, `watch` and `lockbench` result is stored there)'
complete -c latlab -n "__fish_latlab_needs_command" -f -a "compare" -d 'Write the comparison report of results from the history, by id'
complete -c latlab -n "__fish_latlab_needs_command" -f -a "scenario" -d 'Run one of the papers\' experiments on this machine and write its comparison report'
complete -c latlab -n "__fish_latlab_needs_command" -f -a "respond" -d 'Response latency to an external event: stimulus to responder wake-up and answer (pty/serial, pipe, eventfd, socket, UDP, signal; real serial and GPIO)'
complete -c latlab -n "__fish_latlab_needs_command" -f -a "push" -d 'Send result files to a `latlab serve` (through a local spool: nothing is lost while it is down)'
complete -c latlab -n "__fish_latlab_needs_command" -f -a "serve" -d 'Serve the store (SQLite or PostgreSQL) over HTTP: boards push results, a dashboard shows the fleet'
complete -c latlab -n "__fish_latlab_needs_command" -f -a "watch" -d 'Watch the wake-ups of running tasks for hours or days, live, in the kernel (eBPF): latency histograms and the causes of late ones'
complete -c latlab -n "__fish_latlab_needs_command" -f -a "tune" -d 'Apply the fixes the measured causes call for, verify each side by side under the same load, keep what helps, print the boot line, export a tuned profile, undo the rest'
complete -c latlab -n "__fish_latlab_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c latlab -n "__fish_latlab_using_subcommand run" -l cpus -d 'CPUs to measure on, one thread each (e.g. `0`, `0-3`, `1,3`) [default: every usable CPU]' -r
complete -c latlab -n "__fish_latlab_using_subcommand run" -l policy -d 'Scheduling policy of the measurement threads' -r -f -a "fifo\t''
rr\t''
other\t''"
complete -c latlab -n "__fish_latlab_using_subcommand run" -l priority -d 'Real-time priority (1-99) for fifo/rr' -r
complete -c latlab -n "__fish_latlab_using_subcommand run" -l interval -d 'Period of the measurement threads (e.g. `1ms`, `100us`)' -r
complete -c latlab -n "__fish_latlab_using_subcommand run" -l interval-step -d 'Add this much to the period of each further thread (cyclictest\'s -d) [default: 0, all alike]' -r
complete -c latlab -n "__fish_latlab_using_subcommand run" -l duration -d 'How long to measure (e.g. `30s`, `10m`) [default: 30s unless --loops is given]' -r
complete -c latlab -n "__fish_latlab_using_subcommand run" -l loops -d 'Stop after this many activations per thread' -r
complete -c latlab -n "__fish_latlab_using_subcommand run" -l timer -d 'Wake-up source: clock-nanosleep, nanosleep, itimer, posix-timer, timerfd, rtc' -r
complete -c latlab -n "__fish_latlab_using_subcommand run" -l rtc-device -d 'RTC device for --timer rtc' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand run" -l period-tolerance -d 'Accepted period deviation, e.g. `5%`; giving it makes it a requirement (all periods, or `5%@99.9` for 99.9 % of them). [default: 5%, reported only]' -r
complete -c latlab -n "__fish_latlab_using_subcommand run" -l max-latency -d 'Requirement: no sample above this latency (e.g. `1ms`, `40us`)' -r
complete -c latlab -n "__fish_latlab_using_subcommand run" -l percentile -d 'Requirement: a percentile at or below a limit, e.g. `99.9:40us` (repeatable)' -r
complete -c latlab -n "__fish_latlab_using_subcommand run" -l profile -d 'Requirements from a paper: emblix-class1 (< 100 ms), emblix-class2 (< 1 ms), emblix-class3 (< 100 us), moblin-ivi (40 us; and every period within +-5 % where there are periods)' -r
complete -c latlab -n "__fish_latlab_using_subcommand run" -l samples -d 'Log every sample (16 bytes each) to FILE for offline analysis' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand run" -l json -d 'Also write the result JSON to FILE' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand run" -l histogram-text -d 'Write a histogram in cyclictest\'s -h text format to FILE' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand run" -l output-dir -d 'Directory for `<timestamp>/<result file>`' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand run" -l db -d 'The history database: a SQLite FILE (default: $XDG_DATA_HOME/latlab/history.sqlite, else ~/.local/share/latlab/history.sqlite), or a PostgreSQL URL (postgres://USER@HOST/DB; its tables are created on first use)' -r
complete -c latlab -n "__fish_latlab_using_subcommand run" -l junit -d 'Also write the result as JUnit XML to FILE: one test case per requirement, the figures as properties and in the messages' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand run" -l push -d 'Send the result to a `latlab serve` at URL; when it cannot be reached the result waits in the spool for the next push' -r
complete -c latlab -n "__fish_latlab_using_subcommand run" -l token-file -d 'File holding the board\'s token (from `latlab serve --add-board`); default: the LATLAB_TOKEN environment variable' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand run" -l spool -d 'Directory of results not yet sent (default: $XDG_DATA_HOME/latlab/spool, else ~/.local/share/latlab/spool)' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand run" -l load -d 'Background load while measuring: none, light (= none, the Moblin "light" case), full (cpu+io+net+mem on every CPU), or kinds such as `cpu:2,io:1,net:1` (kinds: cpu, io, net, udp, mem, syscall, ipc)' -r
complete -c latlab -n "__fish_latlab_using_subcommand run" -l load-cmd -d 'Run this shell command as (part of) the load, e.g. "stress-ng --cpu 2"; it is stopped with its whole process group at the end' -r
complete -c latlab -n "__fish_latlab_using_subcommand run" -l load-disk-cap -d 'Most disk space the io load may use' -r
complete -c latlab -n "__fish_latlab_using_subcommand run" -l load-temp-dir -d 'Directory for the io load\'s temporary files [default: the system temp dir]' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand run" -l rt-tests-json -d 'Write the result in rt-tests\' JSON format to FILE' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand run" -l trace -d 'Record kernel events while measuring into this trace-cmd .dat file (as root); measurement threads mark every sample over --trace-threshold in the trace' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand run" -l trace-threshold -d 'Samples at or over this latency get a trace_marker line (cycle, intended and actual wake-up) [default: --max-latency if given, else 100us]' -r
complete -c latlab -n "__fish_latlab_using_subcommand run" -l trace-events -d 'Events to record with --trace (e.g. `sched`, `+syscalls`, `-kmem`) [default: latlab\'s latency set: sched, irq, timer, irq_vectors, nmi, workqueue, kmem page allocation on the measured CPUs]' -r
complete -c latlab -n "__fish_latlab_using_subcommand run" -l trace-buffer-kb -d 'Ring-buffer size per CPU in KiB for --trace' -r
complete -c latlab -n "__fish_latlab_using_subcommand run" -l split -d 'Split each timer-driven wake-up\'s latency, measured in the kernel (BPF, as root), into interrupt latency (expiry to the timer interrupt) and preemption latency (the interrupt to the thread running): a table in the summary, `split` in the JSON. auto: when BPF is available, else a note says why not; on: fail without it; off: never' -r -f -a "auto\t'When BPF is available; otherwise a one-line note says why not'
on\t'Always; a run without BPF fails, naming what is missing'
off\t'Never'"
complete -c latlab -n "__fish_latlab_using_subcommand run" -l no-dma-latency -d 'Do not hold /dev/cpu_dma_latency at 0 during the run (lets CPUs enter deep idle states)'
complete -c latlab -n "__fish_latlab_using_subcommand run" -l no-save -d 'Do not write `<output-dir>/<timestamp>/<result file>` (nor store it in the history)'
complete -c latlab -n "__fish_latlab_using_subcommand run" -l no-history -d 'Do not store the saved result in the history database'
complete -c latlab -n "__fish_latlab_using_subcommand run" -l lava -d 'Print LAVA `lava-test-case NAME --result pass|fail --measurement M --units U` lines, one per requirement (contrib/lava runs them)'
complete -c latlab -n "__fish_latlab_using_subcommand run" -l allow-unprivileged -d 'Measure even without real-time priority or memory locking (the result is marked)'
complete -c latlab -n "__fish_latlab_using_subcommand run" -s q -l quiet -d 'Print only the verdict, what makes the result questionable, where it went and errors: no live view, no notes about the machine, no tables (the result file has them all)'
complete -c latlab -n "__fish_latlab_using_subcommand run" -l load-in-process -d 'Run the built-in loads as threads of latlab itself instead of a child process (hidden: only to compare the two, see bench/load-vs-none.sh)'
complete -c latlab -n "__fish_latlab_using_subcommand run" -s v -l verbose -d 'Print every table (per CPU, the split, the periods, the load, the trace analysis\' tables and worst windows) and the whole text of every note about the machine'
complete -c latlab -n "__fish_latlab_using_subcommand run" -l flight-recorder -d 'With --trace: keep events only in the ring buffer and stop tracing at the first sample over --trace-threshold (like cyclictest\'s breaktrace); the buffer, i.e. what led up to it, is saved at the end. Costs nothing on disk until then'
complete -c latlab -n "__fish_latlab_using_subcommand run" -l explain -d 'Record kernel events while measuring (into --trace FILE, or a temporary file) and explain the late wake-ups at the end (the KTAS analysis of `latlab explain`, with --trace-threshold as the lateness threshold)'
complete -c latlab -n "__fish_latlab_using_subcommand run" -s h -l help -d 'Print help'
complete -c latlab -n "__fish_latlab_using_subcommand run" -s V -l version -d 'Print version'
complete -c latlab -n "__fish_latlab_using_subcommand dump" -l events -d 'Only these events (comma-separated names, `system:name` or `system:*`)' -r
complete -c latlab -n "__fish_latlab_using_subcommand dump" -l cpu -d 'Only these CPUs (e.g. `0,2-3`)' -r
complete -c latlab -n "__fish_latlab_using_subcommand dump" -l from -d 'Skip events before this time (seconds, as printed)' -r
complete -c latlab -n "__fish_latlab_using_subcommand dump" -l to -d 'Skip events after this time (seconds, as printed)' -r
complete -c latlab -n "__fish_latlab_using_subcommand dump" -l stats -d 'Print counts per event and per CPU, lost events and the time span instead of events'
complete -c latlab -n "__fish_latlab_using_subcommand dump" -s h -l help -d 'Print help'
complete -c latlab -n "__fish_latlab_using_subcommand dump" -s V -l version -d 'Print version'
complete -c latlab -n "__fish_latlab_using_subcommand explain" -l pid -d 'Analyse this task (repeatable). Default: latlab\'s measurement threads, else the most periodic timer task. A pid or name that matches no periodic timer task of the trace is an error listing those it has' -r
complete -c latlab -n "__fish_latlab_using_subcommand explain" -l comm -d 'Analyse tasks with this name (repeatable; `name*` matches a prefix)' -r
complete -c latlab -n "__fish_latlab_using_subcommand explain" -l threshold -d 'Late means latency above this: a duration with its unit (`100us`, `1ms`) or a percentile (`p99`)' -r
complete -c latlab -n "__fish_latlab_using_subcommand explain" -l baseline -d 'Normal periods to sample as the baseline' -r
complete -c latlab -n "__fish_latlab_using_subcommand explain" -l json -d 'Write the full report as JSON to this file (`-` for stdout)' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand explain" -l dump-windows -d 'Write each late window\'s events as text into this directory' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand explain" -l run-result -d 'A `latlab run --json` result recorded with the trace: its steal time is shown as evidence for hypervisor gaps' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand explain" -l max-windows -d 'Late windows shown in full in the report' -r
complete -c latlab -n "__fish_latlab_using_subcommand explain" -s h -l help -d 'Print help'
complete -c latlab -n "__fish_latlab_using_subcommand explain" -s V -l version -d 'Print version'
complete -c latlab -n "__fish_latlab_using_subcommand load" -l duration -d 'How long to run (e.g. 30s, 500ms, 2m); Ctrl-C stops early and still reports' -r
complete -c latlab -n "__fish_latlab_using_subcommand load" -l load-cmd -d 'Also run this command (via sh -c, in its own process group) as a load' -r
complete -c latlab -n "__fish_latlab_using_subcommand load" -l json -d 'Write the report as JSON to FILE' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand load" -l disk-cap -d 'Most disk space the io load may use (e.g. 256M, 1G)' -r
complete -c latlab -n "__fish_latlab_using_subcommand load" -l temp-dir -d 'Directory in which the load\'s scratch directory is made (default: $TMPDIR or /tmp)' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand load" -l cpus -d 'CPUs the load may use, e.g. 0-3,6 (default: every online CPU the kernel did not isolate at boot with isolcpus=)' -r
complete -c latlab -n "__fish_latlab_using_subcommand load" -l nice -d 'Nice value of the load (0..19)' -r
complete -c latlab -n "__fish_latlab_using_subcommand load" -l sample-interval -d 'Length of one throughput sample (e.g. 1s, 250ms)' -r
complete -c latlab -n "__fish_latlab_using_subcommand load" -l net-msg-size -d 'Bytes per send of the net and udp loads' -r
complete -c latlab -n "__fish_latlab_using_subcommand load" -l serve -d 'Internal: be the load process of a measuring command (`run --load`): read the request on stdin, report on stdout (see latlab_load::LoadProcess)'
complete -c latlab -n "__fish_latlab_using_subcommand load" -s h -l help -d 'Print help'
complete -c latlab -n "__fish_latlab_using_subcommand load" -s V -l version -d 'Print version'
complete -c latlab -n "__fish_latlab_using_subcommand lockbench" -l duration -d 'Measured time per variant (real threads)' -r
complete -c latlab -n "__fish_latlab_using_subcommand lockbench" -l rounds -d 'Split each variant\'s time into this many slices that take turns with the other variants, so that a disturbance of the machine hits all variants alike' -r
complete -c latlab -n "__fish_latlab_using_subcommand lockbench" -l warmup -d 'Unmeasured time at the start of each variant, while the predictors learn' -r
complete -c latlab -n "__fish_latlab_using_subcommand lockbench" -l variants -d 'Variants to compare, comma-separated: plain, pi, ceiling, delayed-max, delayed-ewma, delayed-quantile, and delayed-pi (delayed-quantile on the PI futex)' -r
complete -c latlab -n "__fish_latlab_using_subcommand lockbench" -l period -d 'Period of the real-time task' -r
complete -c latlab -n "__fish_latlab_using_subcommand lockbench" -l priority -d 'SCHED_FIFO priority of the real-time task (also the ceiling of the ceiling variant)' -r
complete -c latlab -n "__fish_latlab_using_subcommand lockbench" -l rt-hold -d 'Busy time the real-time task holds the lock each period' -r
complete -c latlab -n "__fish_latlab_using_subcommand lockbench" -l cpu -d 'CPU for all threads, or `none` to leave them unpinned [default: the last usable CPU]' -r
complete -c latlab -n "__fish_latlab_using_subcommand lockbench" -l threads -d 'Number of SCHED_OTHER background threads' -r
complete -c latlab -n "__fish_latlab_using_subcommand lockbench" -l site -d 'A background critical section, `NAME=W*LO-HI,...`: W parts of the holds last LO to HI, durations with a unit (`send=93*180-340us,7*1.2-2.2ms`; a LO without one takes HI\'s). Repeatable, up to 8; replaces the default three shaped like the paper\'s Table 3' -r
complete -c latlab -n "__fish_latlab_using_subcommand lockbench" -l site-choice -d 'How background threads pick a site: per-thread (thread i uses site i) or random' -r -f -a "per-thread\t''
random\t''"
complete -c latlab -n "__fish_latlab_using_subcommand lockbench" -l outside-work -d 'Background CPU work outside the lock per iteration' -r
complete -c latlab -n "__fish_latlab_using_subcommand lockbench" -l margin -d 'Margin added to the predicted hold time [default: 100us; 0 with --simulate, as the paper]' -r
complete -c latlab -n "__fish_latlab_using_subcommand lockbench" -l max-refusals -d 'Refusals after which a thread enters anyway' -r
complete -c latlab -n "__fish_latlab_using_subcommand lockbench" -l seed -d 'Seed of the background\'s random choices and of the simulation' -r
complete -c latlab -n "__fish_latlab_using_subcommand lockbench" -l sample-interval -d 'Width of the background-throughput series points in the JSON' -r
complete -c latlab -n "__fish_latlab_using_subcommand lockbench" -l periods -d 'Simulated periods of the real-time task (--simulate)' -r
complete -c latlab -n "__fish_latlab_using_subcommand lockbench" -l predictor -d 'Hold-time prediction of the simulation (--simulate): table (the paper\'s: fixed t_lock = Table 3\'s maxima, 800/2192/128 µs), or learned online: max, ewma or quantile' -r -f -a "table\t''
max\t''
ewma\t''
quantile\t''"
complete -c latlab -n "__fish_latlab_using_subcommand lockbench" -l autogroup-nice -d 'Run the benchmark in a scheduler autogroup of its own at this nice (-20 to 19; negative needs root), so that busy sessions next door (compilers, browsers) do not preempt the background lock holders for milliseconds. Linux autogroups only' -r
complete -c latlab -n "__fish_latlab_using_subcommand lockbench" -l json -d 'Write the results (with the background throughput over time) as JSON to FILE' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand lockbench" -l load -d 'Background load while measuring: none, light (= none, the Moblin "light" case), full (cpu+io+net+mem on every CPU), or kinds such as `cpu:2,io:1,net:1` (kinds: cpu, io, net, udp, mem, syscall, ipc)' -r
complete -c latlab -n "__fish_latlab_using_subcommand lockbench" -l load-cmd -d 'Run this shell command as (part of) the load, e.g. "stress-ng --cpu 2"; it is stopped with its whole process group at the end' -r
complete -c latlab -n "__fish_latlab_using_subcommand lockbench" -l load-disk-cap -d 'Most disk space the io load may use' -r
complete -c latlab -n "__fish_latlab_using_subcommand lockbench" -l load-temp-dir -d 'Directory for the io load\'s temporary files [default: the system temp dir]' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand lockbench" -l db -d 'The history database: a SQLite FILE (default: $XDG_DATA_HOME/latlab/history.sqlite, else ~/.local/share/latlab/history.sqlite), or a PostgreSQL URL (postgres://USER@HOST/DB; its tables are created on first use)' -r
complete -c latlab -n "__fish_latlab_using_subcommand lockbench" -l junit -d 'Also write the result as JUnit XML to FILE: one test case per requirement, the figures as properties and in the messages' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand lockbench" -l push -d 'Send the result to a `latlab serve` at URL; when it cannot be reached the result waits in the spool for the next push' -r
complete -c latlab -n "__fish_latlab_using_subcommand lockbench" -l token-file -d 'File holding the board\'s token (from `latlab serve --add-board`); default: the LATLAB_TOKEN environment variable' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand lockbench" -l spool -d 'Directory of results not yet sent (default: $XDG_DATA_HOME/latlab/spool, else ~/.local/share/latlab/spool)' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand lockbench" -l simulate -d 'Run the deterministic uniprocessor-kernel simulation of the paper instead of real threads'
complete -c latlab -n "__fish_latlab_using_subcommand lockbench" -l no-idle-spinner -d 'No SCHED_IDLE spinner: let the CPU go idle when every background thread waits (on a VM the hypervisor may then take milliseconds to wake the real-time task)'
complete -c latlab -n "__fish_latlab_using_subcommand lockbench" -l no-dma-latency -d 'Do not hold /dev/cpu_dma_latency at 0 during the benchmark (lets CPUs enter deep idle states)'
complete -c latlab -n "__fish_latlab_using_subcommand lockbench" -l allow-unprivileged -d 'Run even without memory locking (the real-time task still needs SCHED_FIFO: the benchmark is about it)'
complete -c latlab -n "__fish_latlab_using_subcommand lockbench" -l require-goal -d 'Exit with status 2 unless delayed-quantile meets the delayed-locking goal: worst lock latency at most 25 % of plain\'s and below pi\'s, background work loss at most 20 % (needs plain, pi and delayed-quantile among the variants)'
complete -c latlab -n "__fish_latlab_using_subcommand lockbench" -l load-in-process -d 'Run the built-in loads as threads of latlab itself instead of a child process (hidden: only to compare the two, see bench/load-vs-none.sh)'
complete -c latlab -n "__fish_latlab_using_subcommand lockbench" -l no-history -d 'Do not store the results in the history database'
complete -c latlab -n "__fish_latlab_using_subcommand lockbench" -l lava -d 'Print LAVA `lava-test-case NAME --result pass|fail --measurement M --units U` lines, one per requirement (contrib/lava runs them)'
complete -c latlab -n "__fish_latlab_using_subcommand lockbench" -s h -l help -d 'Print help'
complete -c latlab -n "__fish_latlab_using_subcommand lockbench" -s V -l version -d 'Print version'
complete -c latlab -n "__fish_latlab_using_subcommand record" -s o -l output -d 'Output file (trace-cmd .dat version 6)' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand record" -s e -l events -d 'Events: set names (sched, irq, timer, ...), `system:event`, `system:*`; `+X` adds to the defaults, `-X` removes. Repeat or separate with commas' -r
complete -c latlab -n "__fish_latlab_using_subcommand record" -l buffer-size -d 'Ring-buffer size per CPU in KiB [default: from the available memory: 1/16 of it over all CPUs, at most 32 MiB per CPU to start, doubled up to 256 MiB while a CPU\'s buffer fills; the kernel\'s with --flight-recorder]' -r
complete -c latlab -n "__fish_latlab_using_subcommand record" -s d -l duration -d 'Record for this long (e.g. 500ms, 10s, 2m); without a command and without --duration, record until Ctrl-C' -r
complete -c latlab -n "__fish_latlab_using_subcommand record" -l rt-cpus -d 'The CPUs the real-time tasks run on (e.g. `1-3`): the page allocator\'s events (kmem, the busiest under load) are recorded only there, where `latlab explain` reads them; every other event on every CPU [default: every CPU]' -r
complete -c latlab -n "__fish_latlab_using_subcommand record" -l flight-recorder -d 'Keep events only in the ring buffer and write them when SIGUSR1 arrives (to FILE-1.dat, FILE-2.dat, ...) and at the end (to FILE)'
complete -c latlab -n "__fish_latlab_using_subcommand record" -l no-kallsyms -d 'Do not store /proc/kallsyms (smaller file; function addresses stay numbers)'
complete -c latlab -n "__fish_latlab_using_subcommand record" -l json -d 'Print the summary as JSON'
complete -c latlab -n "__fish_latlab_using_subcommand record" -l list-events -d 'List the event sets and exit'
complete -c latlab -n "__fish_latlab_using_subcommand record" -s h -l help -d 'Print help'
complete -c latlab -n "__fish_latlab_using_subcommand record" -s V -l version -d 'Print version'
complete -c latlab -n "__fish_latlab_using_subcommand report" -s o -l output -d 'The HTML file to write' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand report" -l label -d 'Names of the results, in order (default: what differs between them, e.g. kernel or load)' -r
complete -c latlab -n "__fish_latlab_using_subcommand report" -l title -d 'Title of the page' -r
complete -c latlab -n "__fish_latlab_using_subcommand report" -l png -d 'Also write every plot as DIR/<plot>.svg and DIR/<plot>.png (the PNGs are drawn by a headless Chromium, at twice the size for print)' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand report" -s h -l help -d 'Print help'
complete -c latlab -n "__fish_latlab_using_subcommand report" -s V -l version -d 'Print version'
complete -c latlab -n "__fish_latlab_using_subcommand history" -l db -d 'The history database: a SQLite FILE (default: $XDG_DATA_HOME/latlab/history.sqlite, else ~/.local/share/latlab/history.sqlite), or a PostgreSQL URL (postgres://USER@HOST/DB; its tables are created on first use)' -r
complete -c latlab -n "__fish_latlab_using_subcommand history" -l limit -d 'Only the newest N results (of those the other filters select)' -r
complete -c latlab -n "__fish_latlab_using_subcommand history" -l kind -d 'Only results of this kind: run, respond, watch, watch-snapshot, lockbench, peer (a cyclictest, rt-tests or rtla file), ... (as listed), or a whole schema' -r
complete -c latlab -n "__fish_latlab_using_subcommand history" -l board -d 'Only results pushed by this board (to `latlab serve`)' -r
complete -c latlab -n "__fish_latlab_using_subcommand history" -l host -d 'Only results measured on this host' -r
complete -c latlab -n "__fish_latlab_using_subcommand history" -l kernel -d 'Only results from this kernel release' -r
complete -c latlab -n "__fish_latlab_using_subcommand history" -l load -d 'Only results under this load, as listed (`none`: without load)' -r
complete -c latlab -n "__fish_latlab_using_subcommand history" -l since -d 'Only results started on or after this UTC date or time (YYYY-MM-DD, YYYY-MM-DDTHH:MM or YYYY-MM-DDTHH:MM:SS)' -r
complete -c latlab -n "__fish_latlab_using_subcommand history" -l until -d 'Only results started on or before this UTC date or time (a day given includes the whole day)' -r
complete -c latlab -n "__fish_latlab_using_subcommand history" -l add -d 'First store these result files (e.g. from another machine, or from before the history existed; a cyclictest, rt-tests or rtla file as read by `latlab report`), then list' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand history" -l delete -d 'Delete these results (ids as listed), all or none: when one is not stored, nothing is deleted. A SQLite file shrinks accordingly' -r
complete -c latlab -n "__fish_latlab_using_subcommand history" -l delete-listed -d 'Delete every result the filters select (give at least one filter; the deleted results are listed)'
complete -c latlab -n "__fish_latlab_using_subcommand history" -s h -l help -d 'Print help'
complete -c latlab -n "__fish_latlab_using_subcommand history" -s V -l version -d 'Print version'
complete -c latlab -n "__fish_latlab_using_subcommand compare" -l db -d 'The history database: a SQLite FILE (default: $XDG_DATA_HOME/latlab/history.sqlite, else ~/.local/share/latlab/history.sqlite), or a PostgreSQL URL (postgres://USER@HOST/DB; its tables are created on first use)' -r
complete -c latlab -n "__fish_latlab_using_subcommand compare" -s o -l output -d 'The HTML file to write' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand compare" -l label -d 'Names of the results, in order (default: what differs between them, e.g. kernel or load)' -r
complete -c latlab -n "__fish_latlab_using_subcommand compare" -l title -d 'Title of the page' -r
complete -c latlab -n "__fish_latlab_using_subcommand compare" -l png -d 'Also write every plot as DIR/<plot>.svg and DIR/<plot>.png (the PNGs are drawn by a headless Chromium, at twice the size for print)' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand compare" -s h -l help -d 'Print help'
complete -c latlab -n "__fish_latlab_using_subcommand compare" -s V -l version -d 'Print version'
complete -c latlab -n "__fish_latlab_using_subcommand scenario" -l out -d 'Directory for the steps\' JSON results and the report [default: latlab-scenarios/<name>]' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand scenario" -l cpus -d 'CPUs to measure on (passed to `latlab run --cpus`)' -r
complete -c latlab -n "__fish_latlab_using_subcommand scenario" -l duration -d 'Length of each measurement step (e.g. `30s`, `10m`) [default: characterize 30s, emblix and moblin 60s, montavista 10m; ktas counts periods and delayed-locking has its own lengths, so neither takes it]' -r
complete -c latlab -n "__fish_latlab_using_subcommand scenario" -l quick -d 'A smoke run: a few seconds per step instead of the paper\'s lengths'
complete -c latlab -n "__fish_latlab_using_subcommand scenario" -s v -l verbose -d 'characterize: print each step\'s whole output (every table, the trace analysis) instead of its verdict line'
complete -c latlab -n "__fish_latlab_using_subcommand scenario" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c latlab -n "__fish_latlab_using_subcommand scenario" -s V -l version -d 'Print version'
complete -c latlab -n "__fish_latlab_using_subcommand respond" -l channel -d 'Emulated channel: pty (raw pseudo-terminal: the kernel tty path, serial emulation), pipe, eventfd, unix, udp, signal' -r
complete -c latlab -n "__fish_latlab_using_subcommand respond" -l serial -d 'Real serial port(s): `TX` (loopback plug, needs --gpio for the answer) or `TX,RX` (two ports joined by a null-modem cable)' -r
complete -c latlab -n "__fish_latlab_using_subcommand respond" -l baud -d 'Serial line speed' -r
complete -c latlab -n "__fish_latlab_using_subcommand respond" -l gpio -d 'Answer with a real GPIO toggle: the responder drives OUT, wired to IN, whose edge the stimulus times with the kernel\'s timestamp (e.g. gpiochip0:17,gpiochip0:27)' -r
complete -c latlab -n "__fish_latlab_using_subcommand respond" -l count -d 'Events to send [default: 1000000, the paper\'s count, unless --duration is given]' -r
complete -c latlab -n "__fish_latlab_using_subcommand respond" -l duration -d 'Send events for this long instead of a count (e.g. `60s`)' -r
complete -c latlab -n "__fish_latlab_using_subcommand respond" -l gap -d 'Gap between events: fixed (`1ms`) or uniformly random (`500us..1500us`), so the event is not phase-locked to the timer tick. Use the real event rate: a short gap keeps the responder\'s caches warm and lowers the latency' -r
complete -c latlab -n "__fish_latlab_using_subcommand respond" -l timeout -d 'An event unanswered after this long is counted lost' -r
complete -c latlab -n "__fish_latlab_using_subcommand respond" -l policy -d 'Scheduling policy of the responder (the stimulus gets the same, one priority lower)' -r -f -a "fifo\t''
rr\t''
other\t''"
complete -c latlab -n "__fish_latlab_using_subcommand respond" -l priority -d 'Real-time priority (1-99) of the responder' -r
complete -c latlab -n "__fish_latlab_using_subcommand respond" -l responder-cpu -d 'CPU of the responder [default: the last usable CPU]' -r
complete -c latlab -n "__fish_latlab_using_subcommand respond" -l stimulus-cpu -d 'CPU of the stimulus [default: the first usable CPU]' -r
complete -c latlab -n "__fish_latlab_using_subcommand respond" -l max-latency -d 'Requirement: no sample above this latency (e.g. `1ms`, `40us`)' -r
complete -c latlab -n "__fish_latlab_using_subcommand respond" -l percentile -d 'Requirement: a percentile at or below a limit, e.g. `99.9:40us` (repeatable)' -r
complete -c latlab -n "__fish_latlab_using_subcommand respond" -l profile -d 'Requirements from a paper: emblix-class1 (< 100 ms), emblix-class2 (< 1 ms), emblix-class3 (< 100 us), moblin-ivi (40 us; and every period within +-5 % where there are periods)' -r
complete -c latlab -n "__fish_latlab_using_subcommand respond" -l check-on -d 'Which latency the requirements are checked on: round-trip (what the paper\'s board timed), one-way, or both' -r
complete -c latlab -n "__fish_latlab_using_subcommand respond" -l output-dir -d 'Directory for `<timestamp>/<result file>`' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand respond" -l db -d 'The history database: a SQLite FILE (default: $XDG_DATA_HOME/latlab/history.sqlite, else ~/.local/share/latlab/history.sqlite), or a PostgreSQL URL (postgres://USER@HOST/DB; its tables are created on first use)' -r
complete -c latlab -n "__fish_latlab_using_subcommand respond" -l junit -d 'Also write the result as JUnit XML to FILE: one test case per requirement, the figures as properties and in the messages' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand respond" -l push -d 'Send the result to a `latlab serve` at URL; when it cannot be reached the result waits in the spool for the next push' -r
complete -c latlab -n "__fish_latlab_using_subcommand respond" -l token-file -d 'File holding the board\'s token (from `latlab serve --add-board`); default: the LATLAB_TOKEN environment variable' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand respond" -l spool -d 'Directory of results not yet sent (default: $XDG_DATA_HOME/latlab/spool, else ~/.local/share/latlab/spool)' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand respond" -l load -d 'Background load while measuring: none, light (= none, the Moblin "light" case), full (cpu+io+net+mem on every CPU), or kinds such as `cpu:2,io:1,net:1` (kinds: cpu, io, net, udp, mem, syscall, ipc)' -r
complete -c latlab -n "__fish_latlab_using_subcommand respond" -l load-cmd -d 'Run this shell command as (part of) the load, e.g. "stress-ng --cpu 2"; it is stopped with its whole process group at the end' -r
complete -c latlab -n "__fish_latlab_using_subcommand respond" -l load-disk-cap -d 'Most disk space the io load may use' -r
complete -c latlab -n "__fish_latlab_using_subcommand respond" -l load-temp-dir -d 'Directory for the io load\'s temporary files [default: the system temp dir]' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand respond" -l json -d 'Also write the result JSON (schema latlab.respond) to FILE' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand respond" -l histogram-text -d 'Write a histogram in cyclictest\'s -h text format to FILE (column 1 one-way, column 2 round-trip)' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand respond" -l no-dma-latency -d 'Do not hold /dev/cpu_dma_latency at 0 (lets CPUs enter deep idle states, as the paper\'s Atom did)'
complete -c latlab -n "__fish_latlab_using_subcommand respond" -l no-save -d 'Do not write `<output-dir>/<timestamp>/<result file>` (nor store it in the history)'
complete -c latlab -n "__fish_latlab_using_subcommand respond" -l no-history -d 'Do not store the saved result in the history database'
complete -c latlab -n "__fish_latlab_using_subcommand respond" -l lava -d 'Print LAVA `lava-test-case NAME --result pass|fail --measurement M --units U` lines, one per requirement (contrib/lava runs them)'
complete -c latlab -n "__fish_latlab_using_subcommand respond" -l allow-unprivileged -d 'Measure even without real-time priority or memory locking (the result is marked)'
complete -c latlab -n "__fish_latlab_using_subcommand respond" -l load-in-process -d 'Run the built-in loads as threads of latlab itself instead of a child process (hidden: only to compare the two, see bench/load-vs-none.sh)'
complete -c latlab -n "__fish_latlab_using_subcommand respond" -s q -l quiet -d 'No live view'
complete -c latlab -n "__fish_latlab_using_subcommand respond" -s h -l help -d 'Print help'
complete -c latlab -n "__fish_latlab_using_subcommand respond" -s V -l version -d 'Print version'
complete -c latlab -n "__fish_latlab_using_subcommand push" -l to -d 'The server: the URL `latlab serve` listens on (http://HOST:PORT)' -r
complete -c latlab -n "__fish_latlab_using_subcommand push" -l token-file -d 'File holding the board\'s token (from `latlab serve --add-board`); default: the LATLAB_TOKEN environment variable' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand push" -l spool -d 'Directory of results not yet sent (default: $XDG_DATA_HOME/latlab/spool, else ~/.local/share/latlab/spool)' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand push" -s h -l help -d 'Print help'
complete -c latlab -n "__fish_latlab_using_subcommand push" -s V -l version -d 'Print version'
complete -c latlab -n "__fish_latlab_using_subcommand serve" -l db -d 'The history database: a SQLite FILE (default: $XDG_DATA_HOME/latlab/history.sqlite, else ~/.local/share/latlab/history.sqlite), or a PostgreSQL URL (postgres://USER@HOST/DB; its tables are created on first use)' -r
complete -c latlab -n "__fish_latlab_using_subcommand serve" -l listen -d 'Address and port to listen on (loopback by default: put a TLS proxy in front to serve a network)' -r
complete -c latlab -n "__fish_latlab_using_subcommand serve" -l add-board -d 'Register a board in the store, print its token (once: only its hash is kept) and exit' -r
complete -c latlab -n "__fish_latlab_using_subcommand serve" -l read-token -d 'Require this token (as `Authorization: Bearer TOKEN` or `?token=`) for reading too; by default the dashboard is open to read' -r
complete -c latlab -n "__fish_latlab_using_subcommand serve" -l max-body-mib -d 'Largest result accepted, MiB' -r
complete -c latlab -n "__fish_latlab_using_subcommand serve" -l regression-threshold -d 'A result is a regression when its worst latency is this many percent above the baseline of its series (the same board, kind and setup, kernel, preemption model and load)' -r
complete -c latlab -n "__fish_latlab_using_subcommand serve" -l db-connections -d 'Database connections at most (requests beyond wait for one)' -r
complete -c latlab -n "__fish_latlab_using_subcommand serve" -s h -l help -d 'Print help'
complete -c latlab -n "__fish_latlab_using_subcommand serve" -s V -l version -d 'Print version'
complete -c latlab -n "__fish_latlab_using_subcommand watch" -l pid -d 'Watch these processes (all their threads, and threads they start); comma-separated' -r
complete -c latlab -n "__fish_latlab_using_subcommand watch" -l comm -d 'Watch threads with these names (`name`, or `prefix*`); comma-separated. Matches are rescanned every second' -r
complete -c latlab -n "__fish_latlab_using_subcommand watch" -l wait -d 'How long to wait for the first task the selection matches (a name or real-time thread may appear later); then the watch fails, storing nothing. 0: fail at once' -r
complete -c latlab -n "__fish_latlab_using_subcommand watch" -l threshold -d 'A wake-up later than this is late: its window is explained (e.g. 100us, 1ms)' -r
complete -c latlab -n "__fish_latlab_using_subcommand watch" -l interval -d 'Snapshot interval: each is kept in the result and stored in the history' -r
complete -c latlab -n "__fish_latlab_using_subcommand watch" -l duration -d 'Stop after this long (e.g. 30s, 1h, 72h); default: until Ctrl-C (or the command ends)' -r
complete -c latlab -n "__fish_latlab_using_subcommand watch" -l json -d 'Write the result (schema latlab.watch) as JSON to FILE' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand watch" -l metrics -d 'Serve OpenMetrics (Prometheus) text on this address, e.g. 127.0.0.1:9464' -r
complete -c latlab -n "__fish_latlab_using_subcommand watch" -l max-windows -d 'Late windows sent per second and CPU at most (the rest are counted, not explained)' -r
complete -c latlab -n "__fish_latlab_using_subcommand watch" -l baseline-every -d 'Send one normal wake-up in N as a baseline window for the cause ranking (0: none)' -r
complete -c latlab -n "__fish_latlab_using_subcommand watch" -l db -d 'The history database: a SQLite FILE (default: $XDG_DATA_HOME/latlab/history.sqlite, else ~/.local/share/latlab/history.sqlite), or a PostgreSQL URL (postgres://USER@HOST/DB; its tables are created on first use)' -r
complete -c latlab -n "__fish_latlab_using_subcommand watch" -l rt -d 'Only real-time threads (SCHED_FIFO, SCHED_RR, SCHED_DEADLINE): with --pid, --comm or a command, only their wake-ups at a real-time priority are measured; alone, every SCHED_FIFO/SCHED_RR user thread (kernel threads excluded, rescanned every second)'
complete -c latlab -n "__fish_latlab_using_subcommand watch" -l no-history -d 'Do not store snapshots and the result in the history'
complete -c latlab -n "__fish_latlab_using_subcommand watch" -l tracefs -d 'Measure without BPF: stream the same tracepoints from a private tracefs instance and analyse them as they arrive (nothing written to disk; the instance is removed at the end). Same figures and causes, at another cost: the kernel writes every scheduler, interrupt and timer event of every CPU to a ring buffer (paid by the traced tasks) and latlab decodes them all (its own CPU here 0.74x the BPF side\'s, 1.5 % of a CPU), and events are lost when the machine is too busy to read them (counted). docs/watch.md'
complete -c latlab -n "__fish_latlab_using_subcommand watch" -s q -l quiet -d 'No live view and no progress lines; only the final text'
complete -c latlab -n "__fish_latlab_using_subcommand watch" -s h -l help -d 'Print help'
complete -c latlab -n "__fish_latlab_using_subcommand watch" -s V -l version -d 'Print version'
complete -c latlab -n "__fish_latlab_using_subcommand tune" -l cpus -d 'The real-time CPUs (e.g. `1`, `2-3`): measured, and what the fixes keep other work off. At least one online CPU stays for housekeeping [default: the last CPU]' -r
complete -c latlab -n "__fish_latlab_using_subcommand tune" -l load -d 'The background load of every run (as `latlab run --load`)' -r
complete -c latlab -n "__fish_latlab_using_subcommand tune" -l deadline -d 'The deadline the task must meet (e.g. `100us`): the verdict of the before/after runs' -r
complete -c latlab -n "__fish_latlab_using_subcommand tune" -l duration -d 'The baseline\'s and the final run\'s length' -r
complete -c latlab -n "__fish_latlab_using_subcommand tune" -l round -d 'One verification round\'s length' -r
complete -c latlab -n "__fish_latlab_using_subcommand tune" -l rounds -d 'Rounds per fix on each side (applied, undone), alternating; 4 is the fewest that give a 95 % interval' -r
complete -c latlab -n "__fish_latlab_using_subcommand tune" -l priority -d 'SCHED_FIFO priority of the measured task' -r
complete -c latlab -n "__fish_latlab_using_subcommand tune" -l export -d 'Write what was kept as a tuned profile, a shell script and a sysctl.d file under DIR' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand tune" -l json -d 'Write the result (schema latlab.tune) to FILE' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand tune" -l html -d 'Write the HTML report to FILE' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand tune" -l output-dir -d 'Directory for `<timestamp>/<result file>`' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand tune" -l db -d 'The history database: a SQLite FILE (default: $XDG_DATA_HOME/latlab/history.sqlite, else ~/.local/share/latlab/history.sqlite), or a PostgreSQL URL (postgres://USER@HOST/DB; its tables are created on first use)' -r
complete -c latlab -n "__fish_latlab_using_subcommand tune" -l push -d 'Send the result to a `latlab serve` at URL; when it cannot be reached the result waits in the spool for the next push' -r
complete -c latlab -n "__fish_latlab_using_subcommand tune" -l token-file -d 'File holding the board\'s token (from `latlab serve --add-board`); default: the LATLAB_TOKEN environment variable' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand tune" -l spool -d 'Directory of results not yet sent (default: $XDG_DATA_HOME/latlab/spool, else ~/.local/share/latlab/spool)' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand tune" -l runs-dir -d 'Directory for the runs\' JSON files [default: latlab-tune/<timestamp>]' -r -F
complete -c latlab -n "__fish_latlab_using_subcommand tune" -l isolate -d 'Add the standard isolation set (IRQs, workqueues, kernel threads, an isolated partition, idle states, housekeeping sysctls) even where no cause asked for it'
complete -c latlab -n "__fish_latlab_using_subcommand tune" -l plan -d 'Measure the baseline and print the plan; change nothing'
complete -c latlab -n "__fish_latlab_using_subcommand tune" -l keep -d 'Leave the kept fixes applied at the end (recorded beside the restore file: `--restore` undoes them later)'
complete -c latlab -n "__fish_latlab_using_subcommand tune" -l restore -d 'Undo what tune left changed, and exit: a tune that did not end (SIGKILL, a power cut), from its restore file, and the fixes an earlier --keep kept'
complete -c latlab -n "__fish_latlab_using_subcommand tune" -l no-save -d 'Do not write `<output-dir>/<timestamp>/<result file>` (nor store it in the history)'
complete -c latlab -n "__fish_latlab_using_subcommand tune" -l no-history -d 'Do not store the saved result in the history database'
complete -c latlab -n "__fish_latlab_using_subcommand tune" -s h -l help -d 'Print help'
complete -c latlab -n "__fish_latlab_using_subcommand tune" -s V -l version -d 'Print version'
complete -c latlab -n "__fish_latlab_using_subcommand help; and not __fish_seen_subcommand_from run dump explain load lockbench record report history compare scenario respond push serve watch tune help" -f -a "run" -d 'Measure wake-up latency and period accuracy of periodic real-time threads'
complete -c latlab -n "__fish_latlab_using_subcommand help; and not __fish_seen_subcommand_from run dump explain load lockbench record report history compare scenario respond push serve watch tune help" -f -a "dump" -d 'Print the events of a trace one per line, like `trace-cmd report`'
complete -c latlab -n "__fish_latlab_using_subcommand help; and not __fish_seen_subcommand_from run dump explain load lockbench record report history compare scenario respond push serve watch tune help" -f -a "explain" -d 'Name why a periodic timer task woke up late, from a kernel trace (the KTAS analysis)'
complete -c latlab -n "__fish_latlab_using_subcommand help; and not __fish_seen_subcommand_from run dump explain load lockbench record report history compare scenario respond push serve watch tune help" -f -a "load" -d 'Run a background load (cpu, io, net, udp, mem, syscall, ipc, a command) alone and report its throughput'
complete -c latlab -n "__fish_latlab_using_subcommand help; and not __fish_seen_subcommand_from run dump explain load lockbench record report history compare scenario respond push serve watch tune help" -f -a "lockbench" -d 'Compare delayed locking with plain, PI and ceiling locks (real threads, or --simulate)'
complete -c latlab -n "__fish_latlab_using_subcommand help; and not __fish_seen_subcommand_from run dump explain load lockbench record report history compare scenario respond push serve watch tune help" -f -a "record" -d 'Capture kernel events (tracefs) into a trace-cmd .dat file'
complete -c latlab -n "__fish_latlab_using_subcommand help; and not __fish_seen_subcommand_from run dump explain load lockbench record report history compare scenario respond push serve watch tune help" -f -a "report" -d 'Write results as one self-contained HTML report with plots; several results are compared'
complete -c latlab -n "__fish_latlab_using_subcommand help; and not __fish_seen_subcommand_from run dump explain load lockbench record report history compare scenario respond push serve watch tune help" -f -a "history" -d 'List, filter or delete the results kept in the history database (every saved `run`, `respond`, `watch` and `lockbench` result is stored there)'
complete -c latlab -n "__fish_latlab_using_subcommand help; and not __fish_seen_subcommand_from run dump explain load lockbench record report history compare scenario respond push serve watch tune help" -f -a "compare" -d 'Write the comparison report of results from the history, by id'
complete -c latlab -n "__fish_latlab_using_subcommand help; and not __fish_seen_subcommand_from run dump explain load lockbench record report history compare scenario respond push serve watch tune help" -f -a "scenario" -d 'Run one of the papers\' experiments on this machine and write its comparison report'
complete -c latlab -n "__fish_latlab_using_subcommand help; and not __fish_seen_subcommand_from run dump explain load lockbench record report history compare scenario respond push serve watch tune help" -f -a "respond" -d 'Response latency to an external event: stimulus to responder wake-up and answer (pty/serial, pipe, eventfd, socket, UDP, signal; real serial and GPIO)'
complete -c latlab -n "__fish_latlab_using_subcommand help; and not __fish_seen_subcommand_from run dump explain load lockbench record report history compare scenario respond push serve watch tune help" -f -a "push" -d 'Send result files to a `latlab serve` (through a local spool: nothing is lost while it is down)'
complete -c latlab -n "__fish_latlab_using_subcommand help; and not __fish_seen_subcommand_from run dump explain load lockbench record report history compare scenario respond push serve watch tune help" -f -a "serve" -d 'Serve the store (SQLite or PostgreSQL) over HTTP: boards push results, a dashboard shows the fleet'
complete -c latlab -n "__fish_latlab_using_subcommand help; and not __fish_seen_subcommand_from run dump explain load lockbench record report history compare scenario respond push serve watch tune help" -f -a "watch" -d 'Watch the wake-ups of running tasks for hours or days, live, in the kernel (eBPF): latency histograms and the causes of late ones'
complete -c latlab -n "__fish_latlab_using_subcommand help; and not __fish_seen_subcommand_from run dump explain load lockbench record report history compare scenario respond push serve watch tune help" -f -a "tune" -d 'Apply the fixes the measured causes call for, verify each side by side under the same load, keep what helps, print the boot line, export a tuned profile, undo the rest'
complete -c latlab -n "__fish_latlab_using_subcommand help; and not __fish_seen_subcommand_from run dump explain load lockbench record report history compare scenario respond push serve watch tune help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
