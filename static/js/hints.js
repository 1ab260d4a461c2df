// Beginner hints under an error: what the message means and the usual fix, for the mistakes
// students make most. One rule per line: a pattern of PyTorch's message and the hint it gets.
const RULES = [
  [/mat1 and mat2 shapes cannot be multiplied \((\d+)x(\d+) and (\d+)x(\d+)\)/, (m) => {
    const [a, b, c, d] = m.slice(1).map(Number);
    let fix = "";
    if (b === d) fix = " Did you mean the second one transposed (`.T`)?";
    else if (a === c) fix = " Did you mean the first one transposed (`.T`)?";
    return `inner sizes ${b} ≠ ${c}: A @ B needs A's columns to equal B's rows (${a}×${b} @ ${c}×${d}).${fix}`;
  }],
  [/size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\) at non-singleton dimension (\d+)/, (m) =>
    `broadcasting lines shapes up from the right: dimension ${m[3]} is ${m[1]} in one and ${m[2]} in the other; ` +
    "they must be equal, or one of them 1."],
  [/does not require grad and does not have a grad_fn/, () =>
    "nothing this value was computed from requires grad: create the leaf tensors with requires_grad=True " +
    "(and check that no torch.no_grad() or .detach() cut the graph)."],
  [/backward through the graph a second time/, () =>
    "the first backward() freed the graph's saved tensors: pass retain_graph=True to it if you need a second one."],
  [/grad can be implicitly created only for scalar outputs/, () =>
    "backward() needs one number to start from: reduce first (.sum() or .mean()), or pass gradient=… of the output's shape."],
  [/Given groups=\d+, weight of size \[(\d+), (\d+)[^\]]*\], expected input\[[^\]]*\] to have (\d+) channels, but got (\d+) channels/, (m) =>
    `the layer expects ${m[3]} input channels but the input has ${m[4]}: check in_channels, or the input's layout (N, C, H, W).`],
  [/Only Tensors of floating point and complex dtype can require gradients/, () =>
    "this tensor holds integers: write the numbers as floats (1.0, not 1) or pass dtype=torch.float32."],
  [/Did you mean: '([^']+)'\?/, (m) => `a typo? The closest name is \`${m[1]}\`.`],
];

export function hintFor(err) {
  if (!err || !err.message) return null;
  for (const [pattern, hint] of RULES) {
    const m = pattern.exec(err.message);
    if (m) return hint(m);
  }
  return null;
}
