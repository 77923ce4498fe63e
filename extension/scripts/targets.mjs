// The VS Code targets the extension is built for, and the wheel platform tags pip downloads for each.
// `platforms` are listed oldest first: pip takes the first tag a release has a wheel for, so each package
// comes at the oldest OS baseline it supports (the package's minimum OS is the highest tag it ended up with;
// manifest.json records every wheel). `pythons`: the CPython versions whose compiled packages are bundled
// (the rest install on demand, "NKI: Install Server Packages"); see docs/packaging.md for the measured sizes.
export const TARGETS = {
  'linux-x64': {
    platforms: ['manylinux2014_x86_64', 'manylinux_2_17_x86_64', 'manylinux_2_27_x86_64', 'manylinux_2_28_x86_64'],
    pythons: ['3.12'],
  },
  'linux-arm64': {
    platforms: ['manylinux2014_aarch64', 'manylinux_2_17_aarch64', 'manylinux_2_27_aarch64', 'manylinux_2_28_aarch64'],
    pythons: ['3.12'],
  },
  'darwin-x64': {
    platforms: [
      'macosx_10_9_x86_64',
      'macosx_10_13_x86_64',
      'macosx_11_0_x86_64',
      'macosx_12_0_x86_64',
      'macosx_13_0_x86_64',
      'macosx_14_0_x86_64',
      'macosx_15_0_x86_64',
    ],
    pythons: ['3.12'],
  },
  'darwin-arm64': {
    platforms: ['macosx_11_0_arm64', 'macosx_12_0_arm64', 'macosx_13_0_arm64', 'macosx_14_0_arm64'],
    pythons: ['3.12'],
  },
  'win32-x64': { platforms: ['win_amd64'], pythons: ['3.12'] },
};

/** The platform-neutral package: pure-Python libraries only, every compiled package installed on demand. */
export const NEUTRAL = 'universal';

/** Every CPython version the server supports (requires-python >= 3.10; 3.13 the newest tested). */
export const SUPPORTED_PYTHONS = ['3.10', '3.11', '3.12', '3.13'];
