//! What the analysis knows of the traced kernel, the same for every window.

use crate::model::{Kind, Names, Sym};
use crate::separate::Window;

/// Interrupts known by name to deliver hrtimer expiries: the x86 LAPIC
/// timer vector, the ARM generic timer (`arch_timer`), the Cortex-A9/A5
/// private timer (`twd`), RISC-V's `riscv-timer`.
pub(super) fn is_timer_irq_name(name: &str) -> bool {
    name == "local_timer" || name.contains("arch_timer") || name == "twd" || name == "riscv-timer"
}

/// What the analysis knows of the traced kernel, the same for every window.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// A PREEMPT_RT kernel: softirqs run in preemptible threads, so their
    /// time is their thread's, and do not hold off the timer interrupt.
    pub rt: bool,
    /// Interrupts in which an hrtimer expired (the CPU's clock event
    /// device, whatever its name on this machine), learned from the
    /// windows; they count as timer interrupts beside the known names.
    pub timer_irqs: Vec<Sym>,
    /// Timer interrupts are in the trace (irq_vectors or irq_handler
    /// events): a CPU that runs with interrupts on logs the scheduler tick.
    pub ticks_traced: bool,
}

impl Context {
    /// The context of a trace: `rt` as the kernel was found, the timer
    /// interrupts learned from `windows` (the interrupt being handled on a
    /// CPU when an `hrtimer_expire_entry` was logged there).
    pub fn new(rt: bool, windows: &[Window], names: &Names) -> Context {
        let mut timer_irqs: Vec<Sym> = Vec::new();
        let mut ticks_traced = false;
        let mut top: Vec<(u32, Option<Sym>)> = Vec::new();
        for w in windows {
            top.clear();
            top.push((w.p.timer_cpu, w.timer_cpu_state.irqs.last().copied()));
            if w.p.cpu != w.p.timer_cpu {
                top.push((w.p.cpu, w.task_cpu_state.irqs.last().copied()));
            }
            for r in &w.events {
                let Some(slot) = top.iter_mut().find(|(c, _)| *c == r.cpu) else {
                    continue;
                };
                match r.kind {
                    Kind::IrqEntry { name, .. } => {
                        slot.1 = Some(name);
                        ticks_traced |= is_timer_irq_name(names.get(name));
                    }
                    Kind::IrqExit { .. } | Kind::Switch { .. } => slot.1 = None,
                    Kind::HrtimerExpireEntry { .. } => {
                        if let Some(n) = slot.1 {
                            if !timer_irqs.contains(&n) && timer_irqs.len() < 16 {
                                timer_irqs.push(n);
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        ticks_traced |= !timer_irqs.is_empty();
        Context {
            rt,
            timer_irqs,
            ticks_traced,
        }
    }

    pub(crate) fn is_timer_irq(&self, irq: Sym, names: &Names) -> bool {
        self.timer_irqs.contains(&irq) || is_timer_irq_name(names.get(irq))
    }
}
