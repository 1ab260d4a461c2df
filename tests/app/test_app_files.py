"""Checkpoint-and-reload through /api/run: the program's files live in its run only, and its open files and the
loaded state dicts never break the answer (globals holding them are sealed like any other value)."""


def test_checkpoint_program_runs_through_the_api(run):
    src = ("import torch\nmodel = torch.nn.Linear(2, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
           "loss = model(torch.ones(3, 2)).sum()\nloss.backward()\nopt.step()\n"
           "torch.save({'model': model.state_dict(), 'opt': opt.state_dict()}, 'ckpt.pt')\n"
           "ckpt = torch.load('ckpt.pt', weights_only=True)\nmodel.load_state_dict(ckpt['model'])\n"
           "log = open('log.txt', 'w')\nprint('step 1', file=log)\nlog.close()\nprint(open('log.txt').read(), end='')\n")
    body = run(src)
    assert body["error"] is None, body["error"]
    assert body["stdout"] == "step 1\n"
    again = run("import torch\ntorch.load('ckpt.pt')")
    assert again["error"]["type"] == "FileNotFoundError"
    assert "no disk" in again["error"]["message"]
