# A program people bring (issue 21): the classic "GANs in 50 lines" demo (a 1-D Gaussian), 200 epochs, with its
# `v.data.storage().tolist()` and BCELoss on both labels; checked against PyTorch's stdout
# ruff: noqa: UP008 - the classes as the demo writes them
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(3)
np.random.seed(3)
data_mean, data_stddev = 4, 1.25
g_input_size, g_hidden_size, g_output_size = 1, 5, 1
d_input_size, d_hidden_size, d_output_size = 100, 10, 1
minibatch_size = d_input_size


def get_distribution_sampler(mu, sigma):
    return lambda n: torch.Tensor(np.random.normal(mu, sigma, (1, n)))


def get_generator_input_sampler():
    return lambda m, n: torch.rand(m, n)


class Generator(nn.Module):
    def __init__(self, input_size, hidden_size, output_size, f):
        super(Generator, self).__init__()
        self.map1 = nn.Linear(input_size, hidden_size)
        self.map2 = nn.Linear(hidden_size, hidden_size)
        self.map3 = nn.Linear(hidden_size, output_size)
        self.f = f

    def forward(self, x):
        x = self.map1(x)
        x = self.f(x)
        x = self.map2(x)
        x = self.f(x)
        x = self.map3(x)
        return x


class Discriminator(nn.Module):
    def __init__(self, input_size, hidden_size, output_size, f):
        super(Discriminator, self).__init__()
        self.map1 = nn.Linear(input_size, hidden_size)
        self.map2 = nn.Linear(hidden_size, hidden_size)
        self.map3 = nn.Linear(hidden_size, output_size)
        self.f = f

    def forward(self, x):
        x = self.f(self.map1(x))
        x = self.f(self.map2(x))
        return self.f(self.map3(x))


def extract(v):
    return v.data.storage().tolist()


def stats(d):
    return [np.mean(d), np.std(d)]


d_sampler = get_distribution_sampler(data_mean, data_stddev)
gi_sampler = get_generator_input_sampler()
G = Generator(g_input_size, g_hidden_size, g_output_size, torch.tanh)
D = Discriminator(d_input_size, d_hidden_size, d_output_size, torch.sigmoid)
criterion = nn.BCELoss()
d_optimizer = optim.SGD(D.parameters(), lr=1e-3, momentum=0.9)
g_optimizer = optim.SGD(G.parameters(), lr=1e-3, momentum=0.9)

for epoch in range(200):
    for d_index in range(2):
        D.zero_grad()
        d_real_data = d_sampler(d_input_size)
        d_real_decision = D(d_real_data)
        d_real_error = criterion(d_real_decision, torch.ones([1, 1]))
        d_real_error.backward()
        d_gen_input = gi_sampler(minibatch_size, g_input_size)
        d_fake_data = G(d_gen_input).detach()
        d_fake_decision = D(d_fake_data.t())
        d_fake_error = criterion(d_fake_decision, torch.zeros([1, 1]))
        d_fake_error.backward()
        d_optimizer.step()
        dre, dfe = extract(d_real_error)[0], extract(d_fake_error)[0]
    for g_index in range(2):
        G.zero_grad()
        gen_input = gi_sampler(minibatch_size, g_input_size)
        g_fake_data = G(gen_input)
        dg_fake_decision = D(g_fake_data.t())
        g_error = criterion(dg_fake_decision, torch.ones([1, 1]))
        g_error.backward()
        g_optimizer.step()
        ge = extract(g_error)[0]
    if epoch % 50 == 0:
        print("Epoch %s: D (%s real_err, %s fake_err) G (%s err); Real Dist (%s),  Fake Dist (%s) " %
              (epoch, dre, dfe, ge, stats(extract(d_real_data)), stats(extract(d_fake_data))))
