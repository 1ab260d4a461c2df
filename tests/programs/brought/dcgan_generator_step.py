# A program as people bring it (issue 21, twelfth session): dcgan_generator_step — prints PyTorch's stdout in the sandbox.
# ruff: noqa: UP008, UP010, UP029 - the tutorial's own idioms (super(Class, self), __future__, io.open), as written
import torch
import torch.nn as nn
torch.manual_seed(999)
nz, ngf, nc = 8, 4, 1
def weights_init(m):
    classname = m.__class__.__name__
    if classname.find('Conv') != -1:
        nn.init.normal_(m.weight.data, 0.0, 0.02)
    elif classname.find('BatchNorm') != -1:
        nn.init.normal_(m.weight.data, 1.0, 0.02)
        nn.init.constant_(m.bias.data, 0)
class Generator(nn.Module):
    def __init__(self):
        super(Generator, self).__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False),
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, nc, 4, 2, 1, bias=False),
            nn.Tanh()
        )
    def forward(self, input):
        return self.main(input)
netG = Generator()
netG.apply(weights_init)
print(netG)
noise = torch.randn(2, nz, 1, 1)
fake = netG(noise)
print(fake.shape, round(fake.mean().item(), 4))
criterion = nn.BCELoss()
optimizerG = torch.optim.Adam(netG.parameters(), lr=0.0002, betas=(0.5, 0.999))
label = torch.full((2,), 1.0, dtype=torch.float)
out = torch.sigmoid(fake.view(2, -1).mean(1))
errG = criterion(out, label)
errG.backward()
optimizerG.step()
print('[%d/%d][%d/%d]\tLoss_G: %.4f\tD(G(z)): %.4f' % (0, 5, 0, 100, errG.item(), out.mean().item()))
