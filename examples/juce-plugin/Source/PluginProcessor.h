// The example plugin: a pass-through effect whose output the license gates. What a developer
// copies: a LicenseGate owned by the processor, an ActivationComponent in the editor.
#pragma once

#include <JuceHeader.h>

class ExampleProcessor : public juce::AudioProcessor {
 public:
  ExampleProcessor();

  void prepareToPlay(double sampleRate, int samplesPerBlock) override;
  void releaseResources() override {}
  bool isBusesLayoutSupported(const BusesLayout &layouts) const override;
  void processBlock(juce::AudioBuffer<float> &buffer, juce::MidiBuffer &midi) override;
  void processBlock(juce::AudioBuffer<double> &buffer, juce::MidiBuffer &midi) override;
  bool supportsDoublePrecisionProcessing() const override { return true; }

  juce::AudioProcessorEditor *createEditor() override;
  bool hasEditor() const override { return true; }

  const juce::String getName() const override { return JucePlugin_Name; }
  bool acceptsMidi() const override { return false; }
  bool producesMidi() const override { return false; }
  double getTailLengthSeconds() const override { return 0.0; }
  int getNumPrograms() override { return 1; }
  int getCurrentProgram() override { return 0; }
  void setCurrentProgram(int) override {}
  const juce::String getProgramName(int) override { return {}; }
  void changeProgramName(int, const juce::String &) override {}
  void getStateInformation(juce::MemoryBlock &) override {}
  void setStateInformation(const void *, int) override {}

  plugin_license::LicenseGate &license() noexcept { return license_; }

 private:
  plugin_license::LicenseGate license_;

  JUCE_DECLARE_NON_COPYABLE_WITH_LEAK_DETECTOR(ExampleProcessor)
};
