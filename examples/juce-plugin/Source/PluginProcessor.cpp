#include "PluginProcessor.h"

#include "PluginEditor.h"

namespace {

// Compiled in: the project id from the vendor dashboard and the vendor's namespace (the one its
// installer and agent use). PLUGIN_LICENSE_PROJECT_ID and PLUGIN_LICENSE_APP override them at
// run time, for tests and demos. And the vendor's public keys (pnpm build:plugin --ticket-key,
// CMake's PLUGIN_LICENSE_TICKET_KEYS): with them the plugin plays only on a ticket the vendor
// signed; nothing at run time changes them.
plugin_license::Settings licenseSettings() {
  plugin_license::Settings s;
  s.projectId = PLUGIN_LICENSE_EXAMPLE_PROJECT_ID;
  s.app = PLUGIN_LICENSE_EXAMPLE_APP;
  s.vendorName = "the plugin-license example";
  s.productName = JucePlugin_Name;
  s.executableName = "plugin-license";
  s.ticketKeys.addTokens(PLUGIN_LICENSE_EXAMPLE_TICKET_KEYS, ",", "");
  s.ticketKeys.removeEmptyStrings();
  // The ticket decides while the agent is away. With neither (no ticket here, no agent answering)
  // the default is silence after 5 s; a vendor who would rather never stop a musician writes
  // s.unknown = plc::UnknownPolicy::keepPlaying().
  return plugin_license::Settings::withOverrides(s);
}

}  // namespace

ExampleProcessor::ExampleProcessor()
    : AudioProcessor(BusesProperties().withInput("Input", juce::AudioChannelSet::stereo(), true).withOutput("Output", juce::AudioChannelSet::stereo(), true)),
      license_(licenseSettings()) {}

void ExampleProcessor::prepareToPlay(double sampleRate, int) { license_.prepare(sampleRate); }

bool ExampleProcessor::isBusesLayoutSupported(const BusesLayout &layouts) const {
  const auto out = layouts.getMainOutputChannelSet();
  return (out == juce::AudioChannelSet::mono() || out == juce::AudioChannelSet::stereo()) && layouts.getMainInputChannelSet() == out;
}

void ExampleProcessor::processBlock(juce::AudioBuffer<float> &buffer, juce::MidiBuffer &) {
  juce::ScopedNoDenormals noDenormals;
  // The plugin's own processing goes here; the gate comes last.
  license_.process(buffer);
}

void ExampleProcessor::processBlock(juce::AudioBuffer<double> &buffer, juce::MidiBuffer &) { license_.process(buffer); }

juce::AudioProcessorEditor *ExampleProcessor::createEditor() { return new ExampleEditor(*this); }

juce::AudioProcessor *JUCE_CALLTYPE createPluginFilter() { return new ExampleProcessor(); }
