// The model and layout options of `fabricmap predict`, shared with `compare --model/--layout` so
// both read a prediction's configuration the same way; and `advise`'s, shared with `report`'s
// advice section.
#pragma once

#include <boost/program_options.hpp>

#include "orchestrator/verdicts/advise.h"
#include "orchestrator/verdicts/predict.h"

namespace fabricmap::orchestrator {

// Adds --model, --params ..., --seq, --global-batch and the step options: what a prediction needs
// besides a layout (shared with `advise`, which searches the layouts itself).
void addModelOptions(boost::program_options::options_description& opts);
// Adds --gpu-memory and --reserve: the GPU memory a layout is checked against (predict, advise).
void addGpuMemoryOptions(boost::program_options::options_description& opts);
// Reads them into `c` (gpuMemoryBytes, reserveBytes); throws UsageError naming a bad size.
void readGpuMemoryOptions(const boost::program_options::variables_map& vm, PredictConfig& c);
// Adds the model options and the GPU memory options, then --micro-batch, --tp/--pp/--dp/--ep,
// --layout and the layout's options, --recompute (not --json, --help or the files).
void addPredictOptions(boost::program_options::options_description& opts);
// Whether a model was named (--model, or any of --params/--layers/--hidden).
bool predictionRequested(const boost::program_options::variables_map& vm);
// The configuration the model options describe (layout 1 x 1 x 1); throws UsageError naming the
// first problem.
PredictConfig modelConfigFrom(const boost::program_options::variables_map& vm);
// The configuration all the predict options describe; throws UsageError naming the first problem.
PredictConfig predictConfigFrom(const boost::program_options::variables_map& vm);

// Adds the model options and advise's own: --framework, --gpus, --gpu-memory, --reserve, --top,
// --bytes-per-token (advise_command.cpp).
void addAdviseOptions(boost::program_options::options_description& opts);
// The advice configuration those options describe; throws UsageError naming the first problem.
AdviseConfig adviseConfigFrom(const boost::program_options::variables_map& vm);

}  // namespace fabricmap::orchestrator
