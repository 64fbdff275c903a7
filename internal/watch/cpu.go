package watch

import (
	"context"

	"github.com/perfbot/perfbot/internal/job"
	"github.com/perfbot/perfbot/internal/measure"
)

// cpu returns where a job's runs are pinned in this cycle, as perfbot
// compare pins them: the watcher's CPUMode, else the job's run.cpu
// (measure.CPUMode), chosen by measure.ChooseCPU (auto: calibrate and take
// the quietest CPU). It is chosen when the cycle first needs it for that
// mode, and again in every cycle: a watch runs for months, and the CPU
// that was quiet when it started is not the quiet one a week later.
func (w *Watcher) cpu(ctx context.Context, s *Place, j *job.Job, jc JobConfig) (int, error) {
	if s.Remote() {
		return -1, nil // a fleet's machines are pinned by their workers
	}
	mode := measure.CPUMode(w.CPUMode, j)
	if cpu, ok := w.cpus[mode]; ok {
		return cpu, nil
	}
	cpu, err := measure.ChooseCPU(ctx, mode, j.Runs, jc.Effect, func(format string, args ...any) {
		w.logf("watch: %s: "+format, append([]any{j.Name}, args...)...)
	})
	if err != nil {
		return 0, err
	}
	if w.cpus == nil {
		w.cpus = map[string]int{}
	}
	w.cpus[mode] = cpu
	return cpu, nil
}
