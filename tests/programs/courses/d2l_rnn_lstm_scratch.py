# d2l 9.5 RNN and 10.1 LSTM from scratch: one_hot inputs, state tuples, grad_clipping, perplexity.
import math

import torch
from torch.nn import functional as F

torch.manual_seed(0)
text = "the time machine by h g wells " * 12
vocab = sorted(set(text))
token_to_idx = {t: i for i, t in enumerate(vocab)}
corpus = [token_to_idx[c] for c in text]
num_steps, batch_size = 8, 4
print(len(vocab), len(corpus))
print(F.one_hot(torch.tensor([0, 2]), len(vocab)))


def get_params(vocab_size, num_hiddens, device):
    num_inputs = num_outputs = vocab_size

    def normal(shape):
        return torch.randn(size=shape, device=device) * 0.01
    W_xh = normal((num_inputs, num_hiddens))
    W_hh = normal((num_hiddens, num_hiddens))
    b_h = torch.zeros(num_hiddens, device=device)
    W_hq = normal((num_hiddens, num_outputs))
    b_q = torch.zeros(num_outputs, device=device)
    params = [W_xh, W_hh, b_h, W_hq, b_q]
    for param in params:
        param.requires_grad_(True)
    return params


def init_rnn_state(batch_size, num_hiddens, device):
    return (torch.zeros((batch_size, num_hiddens), device=device), )


def rnn(inputs, state, params):
    W_xh, W_hh, b_h, W_hq, b_q = params
    H, = state
    outputs = []
    for X in inputs:
        H = torch.tanh(torch.mm(X, W_xh) + torch.mm(H, W_hh) + b_h)
        Y = torch.mm(H, W_hq) + b_q
        outputs.append(Y)
    return torch.cat(outputs, dim=0), (H,)


class RNNModelScratch:
    def __init__(self, vocab_size, num_hiddens, device, get_params, init_state, forward_fn):
        self.vocab_size, self.num_hiddens = vocab_size, num_hiddens
        self.params = get_params(vocab_size, num_hiddens, device)
        self.init_state, self.forward_fn = init_state, forward_fn

    def __call__(self, X, state):
        X = F.one_hot(X.T, self.vocab_size).type(torch.float32)
        return self.forward_fn(X, state, self.params)

    def begin_state(self, batch_size, device):
        return self.init_state(batch_size, self.num_hiddens, device)


def grad_clipping(net, theta):
    params = net.params
    norm = torch.sqrt(sum(torch.sum((p.grad ** 2)) for p in params))
    if norm > theta:
        for param in params:
            param.grad[:] *= theta / norm


def get_lstm_params(vocab_size, num_hiddens, device):
    num_inputs = num_outputs = vocab_size

    def normal(shape):
        return torch.randn(size=shape, device=device)*0.01

    def three():
        return (normal((num_inputs, num_hiddens)), normal((num_hiddens, num_hiddens)),
                torch.zeros(num_hiddens, device=device))
    W_xi, W_hi, b_i = three()
    W_xf, W_hf, b_f = three()
    W_xo, W_ho, b_o = three()
    W_xc, W_hc, b_c = three()
    W_hq = normal((num_hiddens, num_outputs))
    b_q = torch.zeros(num_outputs, device=device)
    params = [W_xi, W_hi, b_i, W_xf, W_hf, b_f, W_xo, W_ho, b_o, W_xc, W_hc, b_c, W_hq, b_q]
    for param in params:
        param.requires_grad_(True)
    return params


def init_lstm_state(batch_size, num_hiddens, device):
    return (torch.zeros((batch_size, num_hiddens), device=device),
            torch.zeros((batch_size, num_hiddens), device=device))


def lstm(inputs, state, params):
    [W_xi, W_hi, b_i, W_xf, W_hf, b_f, W_xo, W_ho, b_o, W_xc, W_hc, b_c, W_hq, b_q] = params
    (H, C) = state
    outputs = []
    for X in inputs:
        I = torch.sigmoid((X @ W_xi) + (H @ W_hi) + b_i)
        F_ = torch.sigmoid((X @ W_xf) + (H @ W_hf) + b_f)
        O = torch.sigmoid((X @ W_xo) + (H @ W_ho) + b_o)
        C_tilda = torch.tanh((X @ W_xc) + (H @ W_hc) + b_c)
        C = F_ * C + I * C_tilda
        H = O * torch.tanh(C)
        Y = (H @ W_hq) + b_q
        outputs.append(Y)
    return torch.cat(outputs, dim=0), (H, C)


def train(net, epochs, lr):
    device = torch.device('cpu')
    for epoch in range(epochs):
        state = net.begin_state(batch_size, device)
        total, count = 0.0, 0
        for start in range(0, len(corpus) - num_steps * batch_size - 1, num_steps * batch_size):
            X = torch.tensor([corpus[start + i * num_steps:start + (i + 1) * num_steps] for i in range(batch_size)])
            Y = torch.tensor([corpus[start + i * num_steps + 1:start + (i + 1) * num_steps + 1] for i in range(batch_size)])
            state = tuple(s.detach_() for s in state)
            y_hat, state = net(X, state)
            l = F.cross_entropy(y_hat, Y.T.reshape(-1)).mean()
            for p in net.params:
                p.grad = None
            l.backward()
            grad_clipping(net, 1)
            with torch.no_grad():
                for p in net.params:
                    p -= lr * p.grad
            total += l.item() * Y.numel()
            count += Y.numel()
        if epoch % 2 == 1:
            print(f'epoch {epoch + 1}: perplexity {math.exp(total / count):.2f}')


net = RNNModelScratch(len(vocab), 32, torch.device('cpu'), get_params, init_rnn_state, rnn)
state = net.begin_state(batch_size, torch.device('cpu'))
Y, new_state = net(torch.arange(10).reshape((2, 5)), net.begin_state(2, torch.device('cpu')))
print(Y.shape, len(new_state), new_state[0].shape)
train(net, 4, 1)
lstm_net = RNNModelScratch(len(vocab), 32, torch.device('cpu'), get_lstm_params, init_lstm_state, lstm)
train(lstm_net, 4, 1)
