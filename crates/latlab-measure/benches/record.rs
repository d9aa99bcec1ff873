//! Per-sample cost of the measurement loop's bookkeeping (histogram, sums,
//! worst-N, per-second buffer, period tracking), without the timer itself.
//! `cargo bench -p latlab-measure --bench record`

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use latlab_measure::engine::Recorder;
use latlab_measure::timer::Wake;

fn record(c: &mut Criterion) {
    let mut group = c.benchmark_group("recorder");
    const N: u64 = 100_000;
    group.throughput(Throughput::Elements(N));
    group.bench_function("record 100k samples at 1 ms", |b| {
        b.iter_batched(
            || Recorder::new(0, 1_000_000, 0.05, 0),
            |mut recorder| {
                for cycle in 0..N {
                    let intended = cycle * 1_000_000;
                    // A spread of latencies that exercises many buckets.
                    let latency = 2_000 + (cycle * 7919) % 60_000;
                    recorder.record(Wake {
                        intended,
                        actual: intended + latency,
                        missed: 0,
                        uncertain: false,
                    });
                }
                recorder
            },
            criterion::BatchSize::LargeInput,
        )
    });
    group.finish();
}

criterion_group!(benches, record);
criterion_main!(benches);
