// What the console host says of one block of a plugin's output, in words that hold for any effect
// (TestHost.cpp prints them; test/block-measure.test.ts checks them on a table of outputs). Plain
// C++17, no JUCE, so the rule is tested with the system compiler in a second.
//
//   state:  "plays" (some sample at or above -120 dBFS) or "silent" (every sample below it, or not a number)
//   output: how the sound relates to the input: "same" (unchanged), "gain" (times a constant gain),
//           "fade" (times a gain that moves smoothly: a gate, a volume ramp), "other" (a delay, a
//           filter, a distortion, a synth: anything else), "none" (silent)
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace block_measure {

// Below this a sample is silence: -120 dBFS.
constexpr double kSilence = 1e-6;
// A gain that moves more than this between two samples is no fade of the input (a delay's ratio jumps).
constexpr double kFadeStep = 0.05;

struct Block {
  const char *state = "silent";
  const char *output = "none";
  double peak = 0;
  // Where the output is the input times a gain: that gain at the first and last samples where the
  // input is far from zero, the largest change between two, and whether it never turned back.
  double from = 0, to = 0, maxStep = 0;
  bool monotonic = true;
  int samples = 0;
};

inline Block measure(const float *out, const float *in, int n) {
  Block b;
  for (int i = 0; i < n; ++i) {
    const double x = std::abs(static_cast<double>(out[i]));
    if (std::isnan(x)) return b;  // a NaN is no sound a host can play
    b.peak = std::max(b.peak, x);
  }
  if (!(b.peak >= kSilence)) return b;
  b.state = "plays";
  bool first = true, same = true, negative = false;
  double previous = 0, direction = 0;
  for (int i = 0; i < n; ++i) {
    const double x = in[i];
    if (std::abs(x) < 0.05) continue;
    const double gain = out[i] / x;
    if (std::abs(gain - 1.0) > 1e-4) same = false;
    if (gain < 0) negative = true;  // the sign turned: no gain of the input does that
    if (first) {
      b.from = gain;
      first = false;
    } else {
      const double step = gain - previous;
      b.maxStep = std::max(b.maxStep, std::abs(step));
      if (std::abs(step) > 1e-6) {
        if (direction != 0 && (step > 0) != (direction > 0)) b.monotonic = false;
        direction = step;
      }
    }
    previous = gain;
    b.to = gain;
    ++b.samples;
  }
  if (b.samples == 0) b.output = "other";  // an input near zero throughout: nothing to compare with
  else if (same) b.output = "same";
  else if (b.samples > 1 && !negative && b.maxStep <= kFadeStep) b.output = std::abs(b.to - b.from) > 1e-3 ? "fade" : "gain";
  else b.output = "other";
  return b;
}

// The peak in dBFS with one decimal, or "null" for silence (JSON).
inline std::string decibels(double peak) {
  if (!(peak >= kSilence)) return "null";
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", 20.0 * std::log10(peak));
  return text;
}

}  // namespace block_measure
